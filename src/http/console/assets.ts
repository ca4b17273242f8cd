// The console's built files (packages/console/dist), read once at boot and served from memory with
// a strong ETag. Vite names every asset by a hash of its content, so assets are cached for a year;
// index.html, which names them, is revalidated on every load.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export interface ConsoleFile {
  body: Buffer
  contentType: string
  etag: string
}

export interface ConsoleAssets {
  index: ConsoleFile
  /** Files under assets/, by name. */
  assets: Map<string, ConsoleFile>
}

/** From src/http/console/ and dist/http/console/ alike: the repository's packages/console/dist. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../packages/console/dist/', import.meta.url))

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
}

function fileOf(file: string): ConsoleFile {
  const body = fs.readFileSync(file)
  return {
    body,
    contentType: CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  }
}

/** The built console, or null when it was not built (the service still serves the API). */
export function loadConsoleAssets(directory: string | null = null): ConsoleAssets | null {
  directory ??= CONSOLE_DIST
  const indexFile = path.join(directory, 'index.html')
  if (!fs.existsSync(indexFile)) return null
  const assets = new Map<string, ConsoleFile>()
  const assetsDir = path.join(directory, 'assets')
  if (fs.existsSync(assetsDir)) {
    for (const name of fs.readdirSync(assetsDir)) {
      // Source maps stay out: the console ships what the browser runs.
      if (!name.endsWith('.map')) assets.set(name, fileOf(path.join(assetsDir, name)))
    }
  }
  return { index: fileOf(indexFile), assets }
}

/** The start banner's line: where the console is and how to sign in, or why it is not there. */
export function consoleBanner(url: string, assets: ConsoleAssets | null): string {
  return assets
    ? `Console: ${url}/console/ (sign in with a one-time link: palmvein console --sub <email>)`
    : 'Console: not built in this installation (npm run build); /console/ answers 503 until it is'
}
