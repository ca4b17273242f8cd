#!/usr/bin/env node
// The palmvein CLI. Commands and flags are a contract: other tools script them.
//   palmvein serve
//   palmvein migrate
//   palmvein token --sub <subject> [--ttl <seconds>]
//   palmvein org create --name <name> --admin <subject> [--platform]
//   palmvein project plan --project <id> --plan <plan>
//   palmvein audit verify [--org <id>] [--checkpoints <file>]
//   palmvein audit checkpoints --out <file>
//   palmvein audit purge [--days <n>]
//   palmvein import --project <id> [--allow-duplicates] [--rejects <file>] [--batch <n>] [--progress-lines] <file.ndjson | ->
//   palmvein export --project <id> --include-biometrics
//   palmvein dedup --environment <id> [--threshold <t>] [--exact] [--checkpoint <file>] [--checkpoint-every <s>] [--stop-after <cells>] [--summary <file>] [--probes <n>] [--cells <n>] [--progress-lines]
//   palmvein keys rotate-master | retire-master
//   palmvein cluster status
//   palmvein backup --out <file>
//   palmvein eval --out <dir> (--templates <file.ndjson> | --synthetic [--identities <n>] [--unenrolled <n>] [--seed <s>] [--dimension <d>]) [--fpir <list>] [--threshold <t>] [--margin <m>] [--mode <m>]
//   palmvein restore <file> [--without-erasure-ledger]
//   palmvein capture --synthetic --identity <n> --hand left|right [--session <k>] [--attempt <a>] [--dimension <d>] [--seed <s>]
// Every command honours the same environment as `serve` (DATABASE_URL, PALMVEIN_DATA_DIR, ...).
import os from 'node:os'
import { parseArgs } from 'node:util'
import { loadLocalIssuer } from './auth/identity-tokens.js'
import { runDedup } from './cli-dedup.js'
import { runBackup, runRestore } from './cli-backup.js'
import { runEval } from './cli-eval.js'
import { runExport } from './cli-export.js'
import { runKeys } from './cli-keys.js'
import { runProjectPlan } from './cli-project.js'
import { runClusterStatus } from './cli-cluster.js'
import { DEFAULT_BATCH, runImport } from './cli-import.js'
import { CommandRefused } from './cli-session.js'
import { ConfigError, loadConfig } from './config.js'
import { organizationResource } from './http/resources/organizations.js'
import { isUuid, newId } from './ids.js'
import { runAuditCheckpoints, runAuditPurge, runAuditVerify } from './cli-audit.js'
import { start } from './server.js'
import { createLogger } from './log.js'
import { syntheticCapture } from './cli/synthetic-capture.js'
import { openDatabase } from './store/engine/database.js'
import { isDatabaseUnreachable } from './store/engine/availability.js'
import { DataDirectoryInUse } from './store/engine/embedded.js'
import { migrate } from './store/migrate.js'
import { insertOrganization } from './store/organizations.js'

const USAGE = `usage:
  palmvein serve                                   run the service
  palmvein migrate                                 apply database migrations and exit
  palmvein token --sub <subject> [--ttl <seconds>] print an identity token from the local development issuer
  palmvein org create --name <name> --admin <subject> [--platform]
                                                   create an organization with that admin; print it as JSON
  palmvein project plan --project <project_id> --plan sandbox|business|enterprise
                                                   set a project's plan (its rate, daily limit and headcount): the
                                                   platform operator's action; prints the project as JSON
  palmvein audit verify [--org <id>] [--checkpoints <file>]
                                                   check the audit trail (one organization's chain, or all) with the
                                                   master key: every record's MAC and link, block and anchor, and signed
                                                   checkpoint (also those of an exported file); exit 1 naming the first
                                                   record edited, inserted, deleted, reordered or hidden
  palmvein audit checkpoints --out <file>          verify, then sign (Ed25519) a checkpoint of every chain's end into
                                                   <file>: keep it away from the database; exit 1 when a chain is broken
  palmvein audit purge [--days <n>]                run the retention purge now (default PALMVEIN_AUDIT_RETENTION_DAYS)
  palmvein import --project <project_id> [--allow-duplicates] [--rejects <file>] [--batch <n>] [--progress-lines] <file.ndjson | ->
                                                   import members with their palms, one JSON object a line
                                                   ({"member_id"?, "display_name", "metadata"?, "left_hand"?, "right_hand"?},
                                                   the hands as in the enroll body); prints a JSON summary; exit 1
                                                   when some lines were refused (--rejects lists them with their codes);
                                                   --progress-lines: {"handled": n} on stderr after each batch (for scripts)
  palmvein export --project <project_id> --include-biometrics
                                                   print the members with their palm captures (decrypted) as import lines
  palmvein dedup --environment <environment_id> [--threshold <t>] [--exact] [--checkpoint <file>] [--checkpoint-every <s>]
                 [--stop-after <cells>] [--summary <file>] [--probes <n>] [--cells <n>] [--progress-lines]
                                                   every pair of members whose palms match at or above t (default: the
                                                   environment's match_threshold), as JSON lines, best first
  palmvein keys rotate-master                      re-wrap every environment key under PALMVEIN_NEW_MASTER_KEY as well
                                                   (the old and the new master key both work until retire-master)
  palmvein keys retire-master                      with the new key as PALMVEIN_MASTER_KEY: drop the old key's wrappings
  palmvein cluster status                          the cluster's nodes and each shard's replicas as JSON (PostgreSQL);
                                                   exit 1 when a shard has fewer ready replicas than wanted
  palmvein backup --out <file>                     a consistent backup of the embedded database, while the service runs
                                                   (not the master key: keep it apart); on PostgreSQL use pg_dump
  palmvein restore <file>                          restore a backup into an empty data directory (needs the master key
                                                   and the erasure ledger erasures.log; --without-erasure-ledger if lost)
  palmvein eval --out <dir> (--templates <file.ndjson | -> | --synthetic [--identities <n>] [--unenrolled <n>] [--seed <s>]
                [--dimension <d>]) [--fpir 1e-2,1e-3,...] [--threshold <t>] [--margin <m>] [--mode exact|two_stage|auto]
                                                   open-set 1:N accuracy with the real matcher: FNIR at FPIR, DET, CMC, score
                                                   distributions (report.json, report.md, SVG charts in <dir>)
  palmvein capture --synthetic --identity <n> --hand left|right [--session <k>] [--attempt <a>]
                   [--dimension 128|256|512] [--seed <s>] [--extractor-id <id>]
                                                   print a PVT1 palm capture (base64url) of a seeded synthetic
                                                   person: same identity and hand, same palm`

class UsageError extends Error {}

/** A command that could not start (refused, or no database) exits 2 like a usage error. */
function refusalAsUsage(error: unknown): never {
  if (error instanceof CommandRefused) throw new UsageError(error.message)
  if (isDatabaseUnreachable(error)) throw new UsageError(`the database is unreachable: ${(error as Error).message}`)
  throw error
}

function options<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], spec: T) {
  try {
    return parseArgs({ args, options: spec, strict: true, allowPositionals: false }).values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

async function serve(): Promise<void> {
  const config = loadConfig()
  const log = createLogger(config)
  // postgres.js leaves a rejection unhandled when a connection dies while it fetches types (its
  // first exchange): during a database outage, or a stall while the service boots (it waits for
  // the database then), that is expected, not a reason to stop. Watched from before the boot.
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnreachable(reason)) {
      log.debug({ err: reason }, 'database connection lost during setup')
      return
    }
    log.fatal({ err: reason }, 'unhandled rejection')
    process.exit(1)
  })
  const service = await start({ config, log })
  if (!config.jwksUrl && !config.jwtPublicKey) {
    console.log(`\npalmvein is running at ${service.url}\nGet an admin token:  npx palmvein token --sub admin@example.com\nCreate its organization:  npx palmvein org create --name "My org" --admin admin@example.com\n`)
  }
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    service.app.log.info(`${signal}: shutting down`)
    service.close().then(() => process.exit(0), (error) => {
      service.app.log.error({ err: error }, 'shutdown failed')
      process.exit(1)
    })
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

async function runMigrate(): Promise<void> {
  const db = await openDatabase(loadConfig())
  try {
    const applied = await migrate(db.sql)
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema up to date')
  } finally {
    await db.close()
  }
}

async function token(args: string[]): Promise<void> {
  const values = options(args, { sub: { type: 'string' }, ttl: { type: 'string' } })
  if (!values.sub) throw new UsageError('token needs --sub <subject>')
  const ttl = values.ttl === undefined ? 3600 : Number(values.ttl)
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 31_536_000) throw new UsageError('--ttl must be a whole number of seconds between 1 and 31536000')
  const config = loadConfig()
  if (config.jwksUrl || config.jwtPublicKey) {
    throw new UsageError('the service verifies tokens from an external issuer (PALMVEIN_JWKS_URL / PALMVEIN_JWT_PUBLIC_KEY); get tokens from that issuer')
  }
  console.log(await (await loadLocalIssuer(config)).sign(values.sub, ttl))
}

async function org(args: string[]): Promise<void> {
  const [action, ...rest] = args
  if (action !== 'create') throw new UsageError('org: the only action is "create"')
  const values = options(rest, { name: { type: 'string' }, admin: { type: 'string' }, platform: { type: 'boolean' } })
  if (!values.name || !values.admin) throw new UsageError('org create needs --name <name> and --admin <subject>')
  const db = await openDatabase(loadConfig())
  try {
    await migrate(db.sql)
    const row = await insertOrganization(db.sql, { id: newId(), name: values.name, kind: values.platform ? 'platform' : 'customer' }, values.admin)
    console.log(JSON.stringify(organizationResource(row), null, 2))
  } finally {
    await db.close()
  }
}

async function audit(args: string[]): Promise<void> {
  const [action, ...rest] = args
  if (action === 'purge') {
    const values = options(rest, { days: { type: 'string' } })
    process.exitCode = await runAuditPurge(wholeNumber('days', values.days, loadConfig().auditRetentionDays, 36_500)).catch(refusalAsUsage)
    return
  }
  if (action === 'checkpoints') {
    const values = options(rest, { out: { type: 'string' } })
    if (!values.out) throw new UsageError('audit checkpoints needs --out <file>')
    process.exitCode = await runAuditCheckpoints(values.out).catch(refusalAsUsage)
    return
  }
  if (action !== 'verify') throw new UsageError('audit: the actions are "verify", "checkpoints" and "purge"')
  const values = options(rest, { org: { type: 'string' }, checkpoints: { type: 'string' } })
  if (values.org !== undefined && !isUuid(values.org)) throw new UsageError('--org must be an organization id (a UUID)')
  process.exitCode = await runAuditVerify(values.org, values.checkpoints).catch(refusalAsUsage)
}

function wholeNumber(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback
  const number = Number(value)
  if (!/^\d+$/.test(value) || number > max) throw new UsageError(`--${name} must be a whole number from 0 to ${max}`)
  return number
}

function capture(args: string[]): void {
  const values = options(args, {
    synthetic: { type: 'boolean' }, identity: { type: 'string' }, hand: { type: 'string' }, session: { type: 'string' },
    attempt: { type: 'string' }, dimension: { type: 'string' }, seed: { type: 'string' }, 'extractor-id': { type: 'string' },
  })
  if (!values.synthetic) throw new UsageError('capture needs --synthetic: the seeded generator is the only source without a sensor')
  if (values.identity === undefined || !values.hand) throw new UsageError('capture needs --identity <n> and --hand left|right')
  if (values.hand !== 'left' && values.hand !== 'right') throw new UsageError('--hand must be left or right')
  const dimension = wholeNumber('dimension', values.dimension, 256, 512)
  if (![128, 256, 512].includes(dimension)) throw new UsageError('--dimension must be 128, 256 or 512')
  console.log(syntheticCapture({
    identity: wholeNumber('identity', values.identity, 0, 10_000_000),
    hand: values.hand,
    session: wholeNumber('session', values.session, 0, 1_000_000),
    attempt: wholeNumber('attempt', values.attempt, 0, 1_000_000),
    dimension,
    seed: wholeNumber('seed', values.seed, 7, 2 ** 31),
    extractorId: wholeNumber('extractor-id', values['extractor-id'], 1, 65_535),
  }))
}

async function importCommand(args: string[]): Promise<void> {
  let parsed
  try {
    parsed = parseArgs({ args, options: { project: { type: 'string' }, 'allow-duplicates': { type: 'boolean' }, rejects: { type: 'string' }, batch: { type: 'string' }, 'progress-lines': { type: 'boolean' } }, strict: true, allowPositionals: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (!values.project || positionals.length !== 1) throw new UsageError('import needs --project <project_id> and one input: a file, or - for stdin')
  const code = await runImport({
    project: values.project, source: positionals[0], allowDuplicates: values['allow-duplicates'] ?? false,
    rejects: values.rejects ?? null, batch: Math.max(1, wholeNumber('batch', values.batch, DEFAULT_BATCH, 10_000)),
    progressLines: values['progress-lines'] ?? false,
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`cannot read ${positionals[0]}: no such file`)
    return refusalAsUsage(error)
  })
  process.exitCode = code
}

async function exportCommand(args: string[]): Promise<void> {
  const values = options(args, { project: { type: 'string' }, 'include-biometrics': { type: 'boolean' } })
  if (!values.project) throw new UsageError('export needs --project <project_id>')
  await runExport({ project: values.project, includeBiometrics: values['include-biometrics'] ?? false }).catch(refusalAsUsage)
}

async function dedupCommand(args: string[]): Promise<void> {
  const values = options(args, {
    environment: { type: 'string' }, threshold: { type: 'string' }, exact: { type: 'boolean' }, checkpoint: { type: 'string' },
    'checkpoint-every': { type: 'string' }, 'stop-after': { type: 'string' }, summary: { type: 'string' }, probes: { type: 'string' },
    cells: { type: 'string' }, 'progress-lines': { type: 'boolean' },
  })
  if (!values.environment) throw new UsageError('dedup needs --environment <environment_id>')
  const threshold = values.threshold === undefined ? null : Number(values.threshold)
  const optional = (name: string, value: string | undefined, min: number, max: number) => {
    if (value === undefined) return undefined
    const number = wholeNumber(name, value, min, max)
    if (number < min) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`)
    return number
  }
  process.exitCode = await runDedup({
    environment: values.environment, threshold, exact: values.exact ?? false, checkpoint: values.checkpoint ?? null,
    checkpointSeconds: optional('checkpoint-every', values['checkpoint-every'], 0, 86_400), stopAfterCells: optional('stop-after', values['stop-after'], 0, 65_535) ?? null,
    summary: values.summary ?? null, probes: optional('probes', values.probes, 1, 65_535), cells: optional('cells', values.cells, 1, 65_535),
    progressLines: values['progress-lines'] ?? false,
  }).catch(refusalAsUsage)
}

async function backup(args: string[]): Promise<void> {
  const values = options(args, { out: { type: 'string' } })
  if (!values.out) throw new UsageError('backup needs --out <file>')
  await runBackup(values.out).catch(refusalAsUsage)
}

async function restore(args: string[]): Promise<void> {
  let positionals: string[]
  let values: { 'without-erasure-ledger'?: boolean }
  try {
    ;({ positionals, values } = parseArgs({ args, options: { 'without-erasure-ledger': { type: 'boolean' } }, strict: true, allowPositionals: true }))
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (positionals.length !== 1) throw new UsageError('restore needs one backup file')
  await runRestore(positionals[0], { withoutErasureLedger: values['without-erasure-ledger'] === true }).catch(refusalAsUsage)
}

/** A number from the command line within [min, max]. */
function fraction(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  const number = Number(value)
  if (value.trim() === '' || !(number >= min && number <= max)) throw new UsageError(`--${name} must be a number from ${min} to ${max}`)
  return number
}

async function evalCommand(args: string[]): Promise<void> {
  const values = options(args, {
    out: { type: 'string' }, templates: { type: 'string' }, synthetic: { type: 'boolean' }, identities: { type: 'string' }, unenrolled: { type: 'string' },
    seed: { type: 'string' }, dimension: { type: 'string' }, fpir: { type: 'string' }, threshold: { type: 'string' }, margin: { type: 'string' }, mode: { type: 'string' },
  })
  if (!values.out) throw new UsageError('eval needs --out <dir>')
  if (Boolean(values.templates) === Boolean(values.synthetic)) throw new UsageError('eval needs either --templates <file> or --synthetic')
  const mode = values.mode ?? 'exact'
  if (mode !== 'exact' && mode !== 'two_stage' && mode !== 'auto') throw new UsageError('--mode must be exact, two_stage or auto')
  const dimension = wholeNumber('dimension', values.dimension, 256, 512)
  if (![128, 256, 512].includes(dimension)) throw new UsageError('--dimension must be 128, 256 or 512')
  const targets = (values.fpir ?? '').split(',').filter(Boolean).map((text) => fraction('fpir', text, 0, Number.MIN_VALUE, 1))
  await runEval({
    out: values.out,
    templates: values.templates ?? null,
    synthetic: values.synthetic ? {
      enrolled: Math.max(1, wholeNumber('identities', values.identities, 2000, 1_000_000)),
      unenrolled: wholeNumber('unenrolled', values.unenrolled, 2000, 1_000_000),
      seed: wholeNumber('seed', values.seed, 42, 2 ** 31), dimension,
    } : null,
    settings: {
      matchThreshold: fraction('threshold', values.threshold, 0.8, 0, 1), margin: fraction('margin', values.margin, 0.03, 0, 1), mode,
      threads: Math.max(1, Math.min(4, os.availableParallelism())),
    },
    targets: targets.length ? targets : undefined,
  }).catch(refusalAsUsage)
}

async function keys(args: string[]): Promise<void> {
  const [subcommand, ...rest] = args
  if (subcommand !== 'rotate-master' && subcommand !== 'retire-master') throw new UsageError('keys needs rotate-master or retire-master')
  options(rest, {})
  await runKeys(subcommand).catch(refusalAsUsage)
}

async function project(args: string[]): Promise<void> {
  const [action, ...rest] = args
  if (action !== 'plan') throw new UsageError('project: the only action is "plan"')
  const values = options(rest, { project: { type: 'string' }, plan: { type: 'string' } })
  await runProjectPlan(values.project, values.plan).catch(refusalAsUsage)
}

async function cluster(args: string[]): Promise<void> {
  const [subcommand, ...rest] = args
  if (subcommand !== 'status') throw new UsageError('cluster needs status')
  options(rest, {})
  process.exitCode = await runClusterStatus().catch(refusalAsUsage)
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv
  switch (command) {
    case 'serve': return serve()
    case 'migrate': return runMigrate()
    case 'token': return token(args)
    case 'org': return org(args)
    case 'project': return project(args)
    case 'audit': return audit(args)
    case 'capture': return capture(args)
    case 'import': return importCommand(args)
    case 'export': return exportCommand(args)
    case 'dedup': return dedupCommand(args)
    case 'keys': return keys(args)
    case 'cluster': return cluster(args)
    case 'backup': return backup(args)
    case 'eval': return evalCommand(args)
    case 'restore': return restore(args)
    case undefined: case 'help': case '--help': case '-h':
      console.log(USAGE)
      return
    default:
      throw new UsageError(`unknown command "${command}"`)
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`palmvein: ${error.message}\n\n${USAGE}`)
    process.exit(2)
  }
  if (error instanceof ConfigError) {
    console.error(`palmvein: configuration error: ${error.message}`)
    process.exit(2)
  }
  if (error instanceof DataDirectoryInUse) {
    console.error(`palmvein: ${error.message}`)
    process.exit(2)
  }
  console.error('palmvein:', error)
  process.exit(1)
})
