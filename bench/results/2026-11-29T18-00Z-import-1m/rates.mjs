// usage: node rates.mjs <out>.progress ... -> per run: seconds to the first batch (the index
// build), then lines a second and process CPU-s per 1 000 lines from the first batch to the last.
import fs from 'node:fs'
for (const file of process.argv.slice(2)) {
  const batches = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => /^([\d.]+) cpu=([\d.]+) \{"handled":(\d+)\}/.exec(line))
    .filter(Boolean)
    .map(([, seconds, cpu, handled]) => ({ seconds: +seconds, cpu: +cpu, handled: +handled }))
  const [first, last] = [batches[0], batches.at(-1)]
  const lines = last.handled - first.handled
  const rate = lines / (last.seconds - first.seconds)
  const cpu = ((last.cpu - first.cpu) / lines) * 1000
  console.log(`${file}: first batch at ${first.seconds.toFixed(1)} s; then ${lines} lines in ${(last.seconds - first.seconds).toFixed(1)} s = ${rate.toFixed(0)} lines/s, ${cpu.toFixed(2)} CPU-s per 1000 lines`)
}
