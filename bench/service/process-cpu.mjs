// CPU time of processes from /proc (Linux): what a benchmark charges to the service and to the
// PostgreSQL server beside wall time. 0 where /proc is not there.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100)

/** User + system CPU time of a process so far (Linux), in ms; 0 where /proc is not there. */
export function cpuMsOf(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS
  } catch {
    return 0
  }
}

/** CPU time of every PostgreSQL server process on this machine (the database of the run's work). */
export function postgresCpuMs() {
  let total = 0
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuMsOf(entry)
    } catch {
      /* exited meanwhile */
    }
  }
  return total
}
