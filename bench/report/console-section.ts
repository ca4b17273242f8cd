// The report's console section: the main bundle a first visit downloads and the first load's time
// in Chromium (bench/service/console-load.mjs), judged against issue #51's targets.
import type { BenchResult } from './result.js'

/** Issue #51: "a first load under 1 s on this machine with the main bundle under 200 KB gzip". */
export const CONSOLE_MAIN_BUNDLE_GZIP_BYTES = 200 * 1024
export const CONSOLE_FIRST_LOAD_MS = 1000

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
const verdict = (met: boolean) => (met ? '**met**' : '**missed**')

export function consoleSection(result: BenchResult, table: (header: string[], rows: string[][], align: string) => string): string {
  const measured = result.console
  if (!measured) return 'Not measured in this run.'
  if (measured.skipped !== undefined) return `Not measured: ${measured.skipped}.`
  const rows = measured.files.map((file) => [file.name, kib(file.bytes), kib(file.gzipBytes)])
  rows.push(['main bundle, in all', kib(measured.files.reduce((sum, file) => sum + file.bytes, 0)), kib(measured.mainGzipBytes)])
  const loads = measured.firstLoadMs.map((value) => value.toFixed(0)).join(', ')
  return [
    'What a first visit to `/console/` downloads: `index.html` and the script and stylesheet it names (uPlot and the OpenID Connect client load later, on the pages that use them), gzip-compressed at the default level.',
    '',
    table(['file', 'size', 'gzip'], rows, 'lrr'),
    '',
    `First load in Debian's Chromium (headless, a fresh profile each time so nothing is cached), from navigation to the sign-in page drawn, against the service started from dist/ on an empty embedded database: median ${measured.firstLoadMedianMs.toFixed(0)} ms over ${measured.firstLoadMs.length} loads (${loads} ms).`,
    '',
    `Main bundle under ${kib(CONSOLE_MAIN_BUNDLE_GZIP_BYTES)} gzip: ${verdict(measured.mainGzipBytes < CONSOLE_MAIN_BUNDLE_GZIP_BYTES)}. First load under ${CONSOLE_FIRST_LOAD_MS} ms (median): ${verdict(measured.firstLoadMedianMs < CONSOLE_FIRST_LOAD_MS)}.`,
  ].join('\n')
}
