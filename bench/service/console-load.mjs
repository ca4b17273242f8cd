// The web console in the benchmark: what a first visit downloads (index.html and the assets it
// names, gzip-compressed as a transfer would be) and how long that first visit takes in Debian's
// Chromium (headless, a fresh profile each time, so nothing is cached): from navigation to the
// sign-in heading drawn, against the service started from dist/ on an empty embedded database.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { chromium } from 'playwright-core'
import { startService } from './service-process.mjs'

const CHROMIUM = '/usr/bin/chromium'

/** index.html and the scripts and stylesheets it names: the main bundle a first load fetches (uPlot and OpenID Connect load later, on demand). */
export function consoleBundle(distDirectory) {
  const html = fs.readFileSync(path.join(distDirectory, 'index.html'))
  const named = [...html.toString().matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((match) => match[1])
  const files = [{ name: 'index.html', bytes: html }, ...named.map((name) => ({ name, bytes: fs.readFileSync(path.join(distDirectory, name)) }))].map(
    ({ name, bytes }) => ({ name, bytes: bytes.length, gzipBytes: zlib.gzipSync(bytes).length }),
  )
  return { files, mainGzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0) }
}

/** `loads` first visits, each in a new browser context; the milliseconds of each until the sign-in page is drawn. */
export async function measureFirstLoads(url, loads) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true })
  const times = []
  try {
    for (let load = 0; load < loads; load++) {
      const context = await browser.newContext()
      const page = await context.newPage()
      const started = performance.now()
      await page.goto(`${url}/console/`)
      await page.getByRole('heading', { name: 'Sign in to the palmvein console' }).waitFor({ timeout: 30_000 })
      times.push(performance.now() - started)
      await context.close()
    }
  } finally {
    await browser.close()
  }
  return times
}

/** The console phase: null when Chromium or the built console is missing (the report says which). */
export async function runConsolePhase(root, loads = 5) {
  const distDirectory = path.join(root, 'packages', 'console', 'dist')
  if (!fs.existsSync(path.join(distDirectory, 'index.html'))) return { skipped: 'the console is not built (node scripts/build.mjs console)' }
  if (!fs.existsSync(CHROMIUM)) return { skipped: `no Chromium at ${CHROMIUM}` }
  const bundle = consoleBundle(distDirectory)
  const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-bench-console-'))
  const service = await startService({ env: { PALMVEIN_DATA_DIR: dataDirectory, DATABASE_URL: '' }, timeoutMs: 120_000 })
  try {
    const times = await measureFirstLoads(service.url, loads)
    const sorted = [...times].sort((a, b) => a - b)
    return { ...bundle, firstLoadMs: times, firstLoadMedianMs: sorted[Math.floor(sorted.length / 2)] }
  } finally {
    await service.stop()
    fs.rmSync(dataDirectory, { recursive: true, force: true })
  }
}
