// Run the CLI from source (tsx) as a separate process, as an operator would run `palmvein ...`.
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))
const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))
const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url))

export function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, PALMVEIN_LOG_LEVEL: 'warn', ...env }
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name]
  return merged
}

/** `stdin`: a file descriptor the command reads as its standard input (default: none). */
export function spawnCli(args: string[], env: Record<string, string | undefined>, stdin: number | 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: cliEnv(env), stdio: [stdin, 'pipe', 'pipe'] })
}

export function runCli(args: string[], env: Record<string, string | undefined>, stdin: number | 'ignore' = 'ignore'): Promise<CliOutput> {
  return outputOf(spawnCli(args, env, stdin))
}

/** `palmvein ...` from the built dist/ (run `npm run build:ts` first): for tests that run many short commands. */
export function runBuiltCli(args: string[], env: Record<string, string | undefined>): Promise<CliOutput> {
  return outputOf(spawn(process.execPath, [BUILT_CLI, ...args], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }))
}

export interface CliOutput {
  code: number | null
  stdout: string
  stderr: string
}

/** What `child` wrote, once it has exited. */
export function outputOf(child: ChildProcess): Promise<CliOutput> {
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr!.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Start `palmvein serve` and resolve with its URL once it listens. */
export function startServeProcess(env: Record<string, string | undefined>) {
  return untilListening(spawnCli(['serve'], { PALMVEIN_LOG_LEVEL: 'info', ...env }), 'serve')
}

/**
 * `palmvein serve` from the built dist/ (run `npm run build:ts` first): starts in a fraction of
 * tsx's time, for tests that start and restart several processes.
 */
export function startBuiltServeProcess(env: Record<string, string | undefined>) {
  const child = spawn(process.execPath, [BUILT_CLI, 'serve'], { env: cliEnv({ PALMVEIN_LOG_LEVEL: 'info', ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
  return untilListening(child, 'serve (dist)')
}

/** `npm start` in the repository, as a user runs it (the built dist/), once it listens. */
export function startNpmStart(env: Record<string, string | undefined>) {
  const child = spawn('npm', ['start'], { cwd: REPOSITORY, env: cliEnv({ PALMVEIN_LOG_LEVEL: 'info', ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
  return untilListening(child, 'npm start')
}

function untilListening(
  child: ChildProcess,
  name: string,
): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
    let output = ''
    // Killed when late: a process left behind would hold its port and its database connections.
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${name} did not start within 30 s:\n${output}`))
    }, 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = /HTTP: listening on (?:\S+ \(every interface; from this machine )?(http:\/\/[^\s")]+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({ child, url: match[1], exited, output: () => output })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code}:\n${output}`))
    })
  })
}

/** A loopback port that is free now (a process started a moment later binds it): the benchmarks' own. */
export { freePort } from '../../bench/service/service-process.mjs'
