// The CLI's manners (issue #49): every command's help runs nothing; a usage error is one line and
// a hint, exit 2; an expected failure is one line without a stack; docs/cli.md is the commands'
// own help. Spawns the compiled CLI (npm run build:ts first).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/program.js'
import { cliReference } from '../../src/cli/reference.js'
import { createSelfSignedCertificate } from '../webhooks/receivers.js'
import { freePort, runBuiltCli, type CliOutput } from '../support/process.js'

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-cli-manners-'))
const absent = path.join(scratch, 'no-data-dir')

const run = (args: string[], env: Record<string, string | undefined> = {}) => runBuiltCli(args, { PALMVEIN_DATA_DIR: absent, ...env })

/** Every command path: `[]`, `['audit']`, `['audit', 'verify']`, ... */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return [prefix, ...command.commands.flatMap((sub) => commandPaths(sub, [...prefix, sub.name()]))]
}

/** A usage error or an expected failure: `lines` lines on stderr, the first saying `pattern`, no stack frame, nothing on stdout. */
function expectOneLineFailure(result: CliOutput, pattern: RegExp, lines: number) {
  expect(result.stderr).not.toMatch(/^\s+at /m)
  expect(result.stdout).toBe('')
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(lines)
  expect(result.stderr).toMatch(pattern)
}

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

describe('palmvein CLI manners', () => {
  it('docs/cli.md is generated from the command definitions (npm run docs:cli)', async () => {
    const written = fs.readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8')
    expect(written, 'docs/cli.md is stale: run npm run docs:cli').toBe(await cliReference())
    for (const name of ['capture', 'keys', 'backup', 'restore', 'eval', 'audit purge', 'import', 'dedup', 'cluster status']) {
      expect(written).toContain(`## \`palmvein ${name}\``)
    }
  })

  it("every command's --help prints its usage, exits 0 and runs nothing (no data directory, no port)", async () => {
    const port = await freePort()
    const paths = commandPaths(await buildProgram({ load: 'all' }))
    expect(paths.length).toBeGreaterThan(20)
    for (const command of paths) {
      const result = await run([...command, '--help'], { PORT: String(port), HOST: '127.0.0.1' })
      expect(result.code, `${command.join(' ')} --help: ${result.stderr}`).toBe(0)
      expect(result.stdout).toMatch(new RegExp(`^Usage: ${['palmvein', ...command].join(' ')}\\b`))
      expect(result.stderr).toBe('')
    }
    expect(fs.existsSync(absent)).toBe(false)
  }, 120_000)

  it('-h and `palmvein help <cmd>` print the same help as --help', async () => {
    for (const command of [['serve'], ['migrate'], ['import'], ['audit']]) {
      const help = await run([...command, '--help'])
      expect((await run([...command, '-h'])).stdout).toBe(help.stdout)
      const viaHelp = await run(['help', ...command])
      expect(viaHelp.code).toBe(0)
      expect(viaHelp.stdout).toBe(help.stdout)
    }
    expect(fs.existsSync(absent)).toBe(false)
  }, 60_000)

  it("`palmvein help <cmd> <subcommand>` prints the subcommand's help, as --help does", async () => {
    const nested = commandPaths(await buildProgram({ load: 'all' })).filter((command) => command.length === 2)
    expect(nested).toContainEqual(['audit', 'verify'])
    for (const command of nested) {
      const viaHelp = await run(['help', ...command])
      expect(viaHelp.code, `help ${command.join(' ')}: ${viaHelp.stderr}`).toBe(0)
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: ${['palmvein', ...command].join(' ')}\\b`))
      expect(viaHelp.stdout).toBe((await run([...command, '--help'])).stdout)
    }
  }, 60_000)

  it('a usage error is one line and a hint, exit 2', async () => {
    const cases: [string[], RegExp, string][] = [
      [['frobnicate'], /^palmvein: unknown command 'frobnicate'/, 'palmvein'],
      [['serv'], /unknown command 'serv' \(Did you mean serve\?\)/, 'palmvein'],
      [['migrate', '--force'], /^palmvein migrate: unknown option '--force'/, 'palmvein migrate'],
      [['token'], /^palmvein token: required option '--sub <subject>' not specified/, 'palmvein token'],
      [['token', '--sub', 'a@b.c', '--ttl', 'soon'], /^palmvein token: option '--ttl <seconds>' argument 'soon' is invalid/, 'palmvein token'],
      [['capture', '--identity', '1', '--hand', 'left'], /^palmvein capture: capture needs --synthetic/, 'palmvein capture'],
      [['capture', '--synthetic', '--identity', '1', '--hand', 'middle'], /argument 'middle' is invalid. Allowed choices are left, right/, 'palmvein capture'],
      [['audit', 'verify', '--org', 'acme'], /^palmvein audit verify: option '--org <id>' argument 'acme' is invalid/, 'palmvein audit verify'],
      [['import', '--project', '7'], /^palmvein import: missing required argument 'file'/, 'palmvein import'],
    ]
    for (const [args, pattern, command] of cases) {
      const result = await run(args)
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2)
      expectOneLineFailure(result, pattern, 2)
      expect(result.stderr.trimEnd().split('\n')[1]).toBe(`see '${command} --help'`)
    }
  }, 60_000)

  it('commands other than serve, migrate and restore refuse to create a data directory, naming it', async () => {
    for (const args of [
      ['token', '--sub', 'a@b.c'],
      ['org', 'create', '--name', 'Shop', '--admin', 'a@b.c'],
      ['audit', 'verify'],
      ['keys', 'retire-master'],
    ]) {
      const result = await run(args)
      expect(result.code, args.join(' ')).toBe(2)
      expectOneLineFailure(result, new RegExp(`^palmvein ${args[0]}.*: no data directory at ${absent} `), 1)
    }
    expect(fs.existsSync(absent)).toBe(false)
  }, 60_000)

  it('backup --out into a missing directory is one line, exit 2, and writes nothing', async () => {
    const dataDir = fs.mkdtempSync(path.join(scratch, 'data-'))
    const out = path.join(scratch, 'missing', 'palmvein.backup')
    const result = await run(['backup', '--out', out], { PALMVEIN_DATA_DIR: dataDir, DATABASE_URL: undefined })
    expect(result.code).toBe(2)
    expectOneLineFailure(result, /^palmvein backup: cannot write .*: there is no directory .*missing$/m, 1)
    expect(fs.readdirSync(dataDir)).toEqual([])
  })

  it('PALMVEIN_HTTP_SERVER=uws where uWebSockets.js cannot serve is a configuration error: one line, exit 2', async () => {
    const certificate = createSelfSignedCertificate(scratch)
    const dataDir = path.join(scratch, 'uws-data')
    const result = await run(['serve'], {
      PALMVEIN_DATA_DIR: dataDir,
      PALMVEIN_HTTP_SERVER: 'uws',
      PALMVEIN_TLS_CERT_FILE: certificate.certFile,
      PALMVEIN_TLS_KEY_FILE: certificate.keyFile,
      PORT: '0',
      HOST: '127.0.0.1',
      PALMVEIN_LOG_LEVEL: 'silent',
    })
    expect(result.code).toBe(2)
    expectOneLineFailure(result, /^palmvein serve: configuration error: PALMVEIN_HTTP_SERVER=uws cannot serve TLS here/, 1)
  })
})
