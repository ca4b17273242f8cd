// Run a load generator in a child process, so the generator's own event loop never competes with
// the code under measurement. The child is this module's sibling file, given as `script`.
import { fork } from 'node:child_process'

export function runInChild(script, options) {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let result = null
    child.once('message', (message) => {
      result = message
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      if (result?.error) reject(new Error(result.error))
      else if (code !== 0 || !result) reject(new Error(`load generator exited with ${code}`))
      else resolve(result)
    })
    child.send(options)
  })
}

/** In the child: receive the options, run, send back the result, exit. */
export function serveChild(run) {
  process.once('message', async (options) => {
    try {
      process.send(await run(options), () => process.exit(0))
    } catch (error) {
      process.send({ error: error?.stack ?? String(error) }, () => process.exit(1))
    }
  })
}
