// Verifying the audit trail. A chain holds when: its retention anchor carries a valid MAC; every
// block row agrees with its records (positions, time bounds, last hash, organization: the columns
// the list filters on); every record links to the one before it, at the next position, and its
// MAC under its block's audit key holds (records written before the trail was keyed: their
// SHA-256, and a keyed record or a signed checkpoint after them); and every signed checkpoint, in
// the database or in an exported file, holds and names a record the chain has, with that hash.
import type { AuditKey, AuditKeys } from './audit-keys.js'
import { checkpointSignatureProblem } from './audit-checkpoints.js'
import { chainHash } from './audit-legacy-hash.js'
import type { Sql } from '../../store/engine/database.js'
import { checkpointsOf, type CheckpointRow } from '../../store/audit-keys.js'
import {
  anchorOf,
  auditChains,
  chainBlocks,
  orgOfChain,
  readBlock,
  windowEdgeBlocks,
  type Anchor,
  type AuditFilter,
  type AuditRow,
  type BlockRow,
  type PurgeKeys,
  type ReadBlock,
} from '../../store/audit-log.js'

export interface Broken {
  seq: number
  reason: string
}

export interface ChainReport {
  chain: string
  records: number
  /** The first record whose hash, link, block or checkpoint does not hold, or null. */
  broken: Broken | null
}

const ZERO_HASH = Buffer.alloc(32)

const anchorStatement = (anchor: Pick<Anchor, 'chain' | 'last_seq' | 'hash'>) =>
  JSON.stringify(['palmvein-audit-anchor', anchor.chain, Number(anchor.last_seq), anchor.hash.toString('hex')])

/** What the purge and adoption store with an anchor: the audit key's MAC over the chain, position and hash. */
export const sealAnchor = (key: AuditKey) => (anchor: Pick<Anchor, 'chain' | 'last_seq' | 'hash'>) => ({
  key_id: key.id,
  mac: key.mac(anchorStatement(anchor)),
})

/** Why one block, taken alone (its row, its records' links and MACs), cannot be trusted, or null. */
export function blockAloneProblem(keys: AuditKeys, block: BlockRow): Broken | null {
  const read = readBlock(block)
  return recordsProblem(read, keys, { prev: null, lastSeq: null, keyed: false }) ?? columnsProblem(read)
}

/** What the retention purge needs: MACs for anchors, and a check of the block it trusts the time bounds of. */
export const purgeKeys = (keys: AuditKeys): PurgeKeys => ({ seal: sealAnchor(keys.current), check: (block) => blockAloneProblem(keys, block) })

function anchorProblem(keys: AuditKeys, anchor: Anchor): Broken | null {
  const key = anchor.key_id === null ? undefined : keys.get(anchor.key_id)
  if (anchor.mac && key?.mac(anchorStatement(anchor)).equals(anchor.mac)) return null
  return {
    seq: Number(anchor.last_seq),
    reason: 'the retention anchor is not authenticated (its MAC is missing or wrong: records before it may have been deleted)',
  }
}

/** Where a walk stands: the last record's hash and position, and whether a keyed record was seen. */
interface WalkState {
  prev: Buffer | null
  lastSeq: number | null
  keyed: boolean
}

const sameTime = (a: Date, b: Date) => a.getTime() === b.getTime()

/** The block's columns that disagree with its records. */
function mismatchedColumns(block: Exclude<ReadBlock, { unreadable: string }>): string[] {
  const rows = block.rows
  if (rows.length === 0) return ['records (none left)']
  const times = rows.map((row) => row.created_at.getTime())
  const columns: string[] = []
  if (rows[0].seq !== Number(block.first_seq)) columns.push('first_seq')
  if (rows[rows.length - 1].seq !== Number(block.last_seq)) columns.push('last_seq')
  if (!sameTime(block.first_at, new Date(Math.min(...times)))) columns.push('first_at')
  if (!sameTime(block.last_at, new Date(Math.max(...times)))) columns.push('last_at')
  if (!block.last_hash.equals(rows[rows.length - 1].hash)) columns.push('last_hash')
  if (block.org_id !== orgOfChain(block.chain)) columns.push('org_id')
  return columns
}

/** Why the record's hash is not its MAC (or, unkeyed, its SHA-256), or null. */
function recordProblem(row: AuditRow, key: AuditKey | null): string | null {
  if (key)
    return key.link(row.prev_hash, row, Number(row.seq)).equals(row.hash)
      ? null
      : 'its content does not match its hash, a MAC under the audit key (the record was edited)'
  return chainHash(row.prev_hash, row).equals(row.hash) ? null : 'its content does not match its hash (the record was edited)'
}

/** Why the block row disagrees with its records (the columns the list filters on), or null. */
function columnsProblem(block: ReadBlock): Broken | null {
  if ('unreadable' in block) return null
  const columns = mismatchedColumns(block)
  return columns.length === 0
    ? null
    : { seq: Number(block.first_seq), reason: `its block's ${columns.join('/')} do not match its records (the block row was edited: the list may skip it)` }
}

/** Checks a block's records from where the walk stands (`state` moves past them), or names the first problem. */
function recordsProblem(block: ReadBlock, keys: AuditKeys, state: WalkState): Broken | null {
  const firstSeq = Number(block.first_seq)
  if ('unreadable' in block) return { seq: firstSeq, reason: `its block cannot be read (${block.unreadable})` }
  const key = block.key_id === null ? null : keys.get(block.key_id)
  if (key === undefined)
    return {
      seq: firstSeq,
      reason: `its block is keyed by audit key ${block.key_id}, which this master key does not open (the wrong PALMVEIN_MASTER_KEY, or audit_keys was edited)`,
    }
  if (!key && state.keyed) return { seq: firstSeq, reason: 'it carries no MAC although records before it do (it was rewritten without the audit key)' }
  for (const row of block.rows) {
    const seq = Number(row.seq)
    if (state.prev && !row.prev_hash.equals(state.prev))
      return { seq, reason: 'its prev_hash is not the hash of the record before it (a record was deleted or inserted)' }
    if (state.lastSeq !== null && (key ? seq !== state.lastSeq + 1 : seq <= state.lastSeq)) {
      return { seq, reason: 'its position does not follow the record before it (records were reordered or removed)' }
    }
    const problem = recordProblem(row, key)
    if (problem) return { seq, reason: problem }
    state.prev = row.hash
    state.lastSeq = seq
  }
  if (key) state.keyed = true
  return null
}

export interface VerifyOptions {
  /** One organization's chain only. */
  orgId?: string
  /** Checkpoints from exported files, kept away from the database. */
  exported?: CheckpointRow[]
}

/** Walks each chain (or the organization's) from its anchor, checking every block, record and checkpoint. */
export async function verifyAuditChains(sql: Sql, keys: AuditKeys, options: VerifyOptions = {}): Promise<ChainReport[]> {
  const exported = (options.exported ?? []).filter((checkpoint) => !options.orgId || checkpoint.chain === options.orgId)
  const chains = options.orgId ? [options.orgId] : [...new Set([...(await auditChains(sql)), ...exported.map((checkpoint) => checkpoint.chain)])].sort()
  const reports: ChainReport[] = []
  for (const chain of chains)
    reports.push(
      await verifyChain(
        sql,
        keys,
        chain,
        exported.filter((checkpoint) => checkpoint.chain === chain),
      ),
    )
  return reports
}

async function verifyChain(sql: Sql, keys: AuditKeys, chain: string, exported: CheckpointRow[]): Promise<ChainReport> {
  let broken: Broken | null = null
  const fail = (problem: Broken | null) => {
    broken ??= problem
  }
  const anchor = await anchorOf(sql, chain)
  if (anchor) fail(anchorProblem(keys, anchor))
  const anchorSeq = anchor ? Number(anchor.last_seq) : 0

  // Each checkpoint pins a record: checked as the walk passes it.
  const pins = new Map<number, Array<{ checkpoint: CheckpointRow; where: string }>>()
  const sources = [
    { where: 'in the database', list: await checkpointsOf(sql, chain) },
    { where: 'in the exported file', list: exported },
  ]
  for (const { where, list } of sources) {
    for (const checkpoint of list) {
      const seq = Number(checkpoint.seq)
      const problem = checkpointSignatureProblem(keys, checkpoint)
      if (problem) fail({ seq, reason: `the signed checkpoint ${where} at this record: ${problem}` })
      else pins.set(seq, [...(pins.get(seq) ?? []), { checkpoint, where }])
    }
  }
  const pinProblem = (seq: number, hash: Buffer): Broken | null => {
    const pin = pins.get(seq)?.find(({ checkpoint }) => !checkpoint.hash.equals(hash))
    pins.delete(seq)
    return pin ? { seq, reason: `its hash is not the one the signed checkpoint ${pin.where} pins (the chain was rewritten)` } : null
  }
  if (anchor) fail(pinProblem(anchorSeq, anchor.hash))

  const state: WalkState = { prev: anchor?.hash ?? ZERO_HASH, lastSeq: anchor ? anchorSeq : null, keyed: false }
  let records = 0
  let tailKeyed = true
  // A block row edited apart from its records is named after any problem of the records themselves.
  let columns: Broken | null = null
  for await (const block of chainBlocks(sql, chain, anchorSeq)) {
    if ('unreadable' in block) {
      fail(recordsProblem(block, keys, state))
      continue
    }
    records += block.rows.length
    if (broken) continue
    columns ??= columnsProblem(block)
    fail(recordsProblem(block, keys, state))
    for (const row of block.rows) fail(pinProblem(Number(row.seq), row.hash))
    tailKeyed = block.key_id !== null
  }
  fail(columns)
  const end = state.lastSeq ?? 0
  // Records from before the trail was keyed are pinned by the keyed record after them, or at the end by a checkpoint.
  if (!broken && records > 0 && !tailKeyed) {
    const covered = [...sources[0].list, ...exported].some(
      (checkpoint) => Number(checkpoint.seq) === end && checkpoint.hash.equals(state.prev!) && !checkpointSignatureProblem(keys, checkpoint),
    )
    if (!covered)
      fail({
        seq: end,
        reason:
          'the records up to here carry no MAC and no signed checkpoint covers them (written before the trail was keyed; the service adopts them at its first start)',
      })
  }
  for (const [seq, list] of [...pins].sort(([a], [b]) => a - b)) {
    if (seq < anchorSeq) continue // purged with the retention: nothing left to compare
    fail({
      seq,
      reason:
        seq > end
          ? `the signed checkpoint ${list[0].where} pins this record but the chain ends at record ${end} (records were removed from its end)`
          : `the signed checkpoint ${list[0].where} pins this record but the chain does not hold it (records were removed)`,
    })
  }
  return { chain, records, broken }
}

/**
 * Why a page of the list cannot be trusted, or null: the chain's anchor, the MAC of every record
 * shown, and the blocks around and inside the window that the list skipped (windowEdgeBlocks).
 * `palmvein audit verify` is the complete check; this one keeps the list from hiding records.
 */
export async function auditWindowProblem(sql: Sql, keys: AuditKeys, filter: AuditFilter, items: AuditRow[]): Promise<Broken | null> {
  const anchor = await anchorOf(sql, filter.orgId)
  if (anchor) {
    const problem = anchorProblem(keys, anchor)
    if (problem) return problem
  }
  for (const row of items) {
    if (row.key_id === null) continue
    const key = keys.get(row.key_id)
    const problem = key ? recordProblem(row, key) : `it is keyed by audit key ${row.key_id}, which this master key does not open`
    if (problem) return { seq: Number(row.seq), reason: problem }
  }
  for (const block of await windowEdgeBlocks(sql, filter.orgId, filter.from, filter.to)) {
    const problem = blockAloneProblem(keys, block)
    if (problem) return problem
  }
  return null
}
