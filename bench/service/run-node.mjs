// Running a Node script of the benchmark (the seeder, a load generator, the palmvein CLI) as a child
// process: its output lines as they come, its exit judged by the codes the caller accepts.
import { spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'

/**
 * Resolves with the script's exit code and stdout lines; `onLine` gets each line of `follow`
 * ('stdout', or 'stderr' for a script that reports progress there) as it comes. An exit code not in
 * `okCodes` rejects, with the end of stderr.
 * @param {string} script
 * @param {string[]} args
 * @param {Record<string, string | undefined>} env merged over this process's environment
 * @param {{ onLine?: (line: string) => void, follow?: 'stdout' | 'stderr', okCodes?: number[] }} [options]
 * @returns {Promise<{ code: number, lines: string[] }>}
 */
export function runNode(script, args, env, options = {}) {
  const { onLine = () => {}, follow = 'stdout', okCodes = [0] } = options
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const lines = []
    let stderr = ''
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line)
      if (follow === 'stdout') onLine(line)
    })
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      stderr = `${stderr}${line}\n`.slice(-4000)
      if (follow === 'stderr') onLine(line)
    })
    child.once('error', reject)
    child.once('close', (code) =>
      okCodes.includes(code) ? resolve({ code, lines }) : reject(new Error(`${path.basename(script)} exited with ${code}:\n${stderr}`)),
    )
  })
}
