// `palmvein audit verify | checkpoints | purge`: the audit trail's checks, its signed checkpoint
// export and its retention purge. Each needs the master key (PALMVEIN_MASTER_KEY or the data
// directory's): the audit keys derive from it (domain/audit-keys.ts).
import { Command } from 'commander'
import fs from 'node:fs/promises'
import { loadConfig } from '../config.js'
import { adoptUnkeyedTrail } from '../domain/audit/audit-adoption.js'
import { checkpointFile, parseCheckpointFile, signCheckpoint } from '../domain/audit/audit-checkpoints.js'
import { loadAuditKeys, type AuditKeys } from '../domain/audit/audit-keys.js'
import { purgeKeys, verifyAuditChains, type ChainReport } from '../domain/audit/audit-verify.js'
import { createKeyring, loadMasterKey } from '../keys/keyring.js'
import { openDatabase, type Sql } from '../store/engine/database.js'
import { replaceFileDurably } from '../store/durable-files.js'
import { migrate } from '../store/migrate.js'
import { insertCheckpoint, type CheckpointRow } from '../store/audit-keys.js'
import { auditChains, chainTail, purgeAuditBefore } from '../store/audit-log.js'
import { uuidOf, wholeNumber } from './arguments.js'
import { CommandRefused } from './errors.js'

/**
 * Runs `task` on the database (joining a running service's) with the audit keys. `register`:
 * record this master key's audit key (commands that write: they sign or MAC). No galleries: the
 * audit commands search nothing.
 */
async function withAuditKeys<T>(register: boolean, task: (sql: Sql, keys: AuditKeys) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const db = await openDatabase(config)
  try {
    await migrate(db.sql)
    const master = (await loadMasterKey(config)).key
    const keyring = createKeyring(master)
    await keyring.refreshMasterKeys(db.sql)
    return await task(db.sql, await loadAuditKeys(db.sql, keyring, master, { register }))
  } finally {
    await db.close()
  }
}

const chainName = (chain: string) => (chain === 'platform' ? 'platform (no organization)' : `organization ${chain}`)

function printReports(reports: ChainReport[]): boolean {
  for (const report of reports) {
    console.log(
      report.broken
        ? `BROKEN ${chainName(report.chain)}: record ${report.broken.seq}: ${report.broken.reason}`
        : `ok ${chainName(report.chain)}: ${report.records} record(s)`,
    )
  }
  if (reports.length === 0) console.log('ok: no audit records')
  return reports.every((report) => !report.broken)
}

/** Exit 1 when a chain does not hold. `checkpoints`: an exported file the database is checked against too. */
async function runAuditVerify(orgId: string | undefined, checkpoints: string | undefined): Promise<number> {
  let exported: CheckpointRow[] | undefined
  if (checkpoints !== undefined) {
    const text = await fs.readFile(checkpoints, 'utf8').catch((error: Error) => {
      throw new CommandRefused(`--checkpoints: ${error.message}`)
    })
    try {
      exported = parseCheckpointFile(text)
    } catch (error) {
      throw new CommandRefused(`--checkpoints ${checkpoints}: ${(error as Error).message}`)
    }
  }
  return withAuditKeys(false, async (sql, keys) => {
    const reports = await verifyAuditChains(sql, keys, { orgId, exported })
    const ok = printReports(reports)
    if (exported) console.log(`checked against ${exported.length} signed checkpoint(s) from ${checkpoints}`)
    return ok ? 0 : 1
  })
}

/**
 * Verifies every chain, signs a checkpoint at the end of each and writes them to `out` (refusing
 * to sign a chain that does not hold). Exit 1, writing nothing, when one does not.
 */
async function runAuditCheckpoints(out: string): Promise<number> {
  return withAuditKeys(true, async (sql, keys) => {
    await adoptUnkeyedTrail(sql, keys)
    const reports = await verifyAuditChains(sql, keys)
    if (!printReports(reports)) {
      console.error('palmvein audit checkpoints: not signing a trail that does not verify; nothing written')
      return 1
    }
    const signed = []
    for (const chain of await auditChains(sql)) {
      const tail = await chainTail(sql, chain)
      if (tail.nextSeq === 1) continue
      const checkpoint = signCheckpoint(keys.current, chain, tail.nextSeq - 1, tail.prev)
      await insertCheckpoint(sql, checkpoint)
      signed.push(checkpoint)
    }
    // Synced before and after the rename: a crash must not leave an empty file over the last anchors.
    await replaceFileDurably(out, checkpointFile(keys, signed), 0o644)
    console.log(`wrote ${signed.length} signed checkpoint(s) to ${out} (audit key ${keys.current.id}); keep it away from the database`)
    return 0
  })
}

/** Exit 1 when a chain was left unpurged because the block the purge would trust fails verification. */
async function runAuditPurge(days: number): Promise<number> {
  return withAuditKeys(true, async (sql, keys) => {
    const { deleted, refused } = await purgeAuditBefore(sql, new Date(Date.now() - days * 86_400_000), purgeKeys(keys))
    console.log(`purged ${deleted} audit record(s) older than ${days} day(s); the chains still verify from their anchors`)
    for (const chain of refused) console.log(`NOT PURGED ${chainName(chain.chain)}: record ${chain.seq}: ${chain.reason}`)
    return refused.length > 0 ? 1 : 0
  })
}

const setExitCode = (code: number) => {
  process.exitCode = code
}

export const auditCommand = () =>
  new Command('audit')
    .description('the audit trail: verify it, export signed checkpoints, purge old records (each needs the master key)')
    .addCommand(
      new Command('verify')
        .description(
          "check the audit trail (one organization's chain, or all) with the master key: every record's MAC and link, " +
            'block and anchor, and signed checkpoint (also those of an exported file); exit 1 naming the first record edited, inserted, deleted, reordered or hidden',
        )
        .option('--org <id>', "only this organization's chain", uuidOf('an organization'))
        .option('--checkpoints <file>', 'also check the database against signed checkpoints exported earlier')
        .action(async (options: { org?: string; checkpoints?: string }) => setExitCode(await runAuditVerify(options.org, options.checkpoints))),
    )
    .addCommand(
      new Command('checkpoints')
        .description("verify, then sign (Ed25519) a checkpoint of every chain's end into <file>: keep it away from the database; exit 1 when a chain is broken")
        .requiredOption('--out <file>', 'the checkpoint file to write')
        .action(async (options: { out: string }) => setExitCode(await runAuditCheckpoints(options.out))),
    )
    .addCommand(
      new Command('purge')
        .description('run the retention purge now: delete records older than the retention; exit 1 when a chain is left unpurged')
        .option('--days <n>', 'the retention in days (default PALMVEIN_AUDIT_RETENTION_DAYS)', wholeNumber(0, 36_500))
        .action(async (options: { days?: number }) => setExitCode(await runAuditPurge(options.days ?? loadConfig().auditRetentionDays))),
    )
