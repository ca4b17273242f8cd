// Starts the real service as a separate process (`node dist/cli/main.js serve`) on a free loopback
// port, waits until /healthz says every gallery is loaded (reporting the rows loaded so far), and
// stops it with SIGTERM, the way an operator would.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

/** A port the OS says is free now (the service binds it a moment later; loopback only). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Resident set size of a process in MiB (Linux), or null. */
export function residentMiB(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : null
  } catch {
    return null
  }
}

/**
 * `port`: a port chosen beforehand (a cluster node's PALMVEIN_NODE_URL names it); `ready`: what /healthz
 * must say besides 200 (a cluster node: every shard replicated).
 * @param {{ env: Record<string, string>, onProgress?: (loaded: number, total: number) => void, timeoutMs?: number, port?: number, ready?: (health: string) => boolean }} options
 * @returns {Promise<{ url: string, pid: number, bootSeconds: number, health: string, stop(): Promise<void>, kill(): Promise<void> }>}
 */
export async function startService(options) {
  const port = options.port ?? (await freePort())
  // Metrics on, as in production, on a port of its own (another palmvein may hold the default).
  const metricsPort = options.env.PALMVEIN_METRICS_PORT ?? String(await freePort())
  const started = performance.now()
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      ...process.env,
      ...options.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PALMVEIN_METRICS_PORT: metricsPort,
      PALMVEIN_LOG_LEVEL: options.env.PALMVEIN_LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  let exited = null
  const exit = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal }
      resolve(exited)
    }),
  )
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (exited) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    await exit
    clearTimeout(timer)
  }

  const deadline = Date.now() + (options.timeoutMs ?? 3_600_000)
  while (true) {
    if (exited) throw new Error(`the service exited (${exited.code ?? exited.signal}) before it was ready:\n${stderr}`)
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`the service was not ready within ${(options.timeoutMs ?? 3_600_000) / 1000} s:\n${stderr}`)
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) })
      const text = await response.text()
      if (response.status === 200 && (options.ready?.(text) ?? true)) {
        const kill = async () => {
          child.kill('SIGKILL')
          await exit
        }
        return { url, pid: child.pid, bootSeconds: (performance.now() - started) / 1000, health: text, stop, kill }
      }
      // "FAIL galleries: loading 123/456 rows" while the boot load runs.
      const loading = /loading (\d+)\/(\d+) rows/.exec(text)
      if (loading) options.onProgress?.(Number(loading[1]), Number(loading[2]))
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** "matcher d=256 native (avx2)" from the galleries line of /healthz. */
export function matcherFromHealth(text) {
  const match = /matcher d=\d+ (\w+) \(([^)]+)\)/.exec(text)
  return match ? { backend: match[1], isa: match[2] } : null
}
