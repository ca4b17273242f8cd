// Enrollment of a member's palms: validate every capture, then in ONE transaction, holding the
// environment's gallery lock (so processes enroll one at a time per environment), catch up on
// other processes' changes, refuse a palm that already belongs to another member of the
// environment (409 duplicate_palm), store the captures and one reference template per hand
// (encrypted), the scan result, the enrollment.completed event and the gallery change, and publish
// the references to the gallery as the transaction's last step. If anything fails, the transaction rolls back and the gallery is re-read from the
// database for that member, so neither database rows nor gallery rows are left behind.
import type { DomainResources } from '../resources.js'
import { requireEnvironmentOwner } from '../../auth/access.js'
import { ServiceError } from '../../errors.js'
import { newId, timestamp } from '../../ids.js'
import type { Queryable, Sql } from '../../store/engine/database.js'
import { lockEnvironmentGallery, recordGalleryChange } from '../../store/gallery-changes.js'
import { markMemberEnrolled, memberWithKey, setMemberKey } from '../../store/members.js'
import type { ProjectRow } from '../../store/projects.js'
import { insertScans, type PalmPosition, type ScanInsert } from '../../store/scans.js'
import { replaceHandTemplates, type Hand } from '../../store/templates.js'
import { enqueueEvent, wakeDispatcher } from '../../webhooks/outbox.js'
import { agreedReference, parseCapture, probeVector, type Capture } from '../identification/captures.js'
import { HANDS, type EnvironmentGallery } from '../galleries/galleries.js'
import { rowsForMembers, type GalleryHit } from '../identification/identify-decision.js'
import { sealMemberHands } from '../../keys/member-sealing.js'
import { newMemberKey, unwrapMemberKey } from '../../keys/template-crypto.js'

export interface EnrollHand {
  enroll_capture: string
  identify_capture: string
  silhouette?: string | null
  palm_position?: PalmPosition | null
}

/** The spec's enroll body: at least one hand. */
export interface EnrollInput {
  member_id: string
  left_hand?: EnrollHand | null
  right_hand?: EnrollHand | null
}

export interface EnrollOptions {
  callerType: 'api_key' | 'token' | 'device'
  deviceId?: string | null
  sessionId?: string | null
  /** Runs inside the same transaction, after the templates are written (Device-Com completes its session there). */
  inTransaction?: (tx: Sql) => Promise<void>
  /** The hands sent replace every palm of the member, a hand not sent is removed (self-enrollment). */
  replaceAllHands?: boolean
}

export interface PreparedHand {
  hand: Hand
  input: EnrollHand
  enroll: Capture
  identify: Capture
  reference: Int8Array
}

/** Every hand's captures parsed and checked against the environment, and its reference built (throws a ServiceError). */
export function prepareHands(input: Pick<EnrollInput, 'left_hand' | 'right_hand'>, environment: EnvironmentGallery['environment']): PreparedHand[] {
  const hands: PreparedHand[] = []
  for (const hand of HANDS) {
    const handInput = input[`${hand}_hand`]
    if (!handInput) continue
    const field = `/${hand}_hand`
    const enroll = parseCapture(handInput.enroll_capture, `${field}/enroll_capture`, environment, hand)
    const identify = parseCapture(handInput.identify_capture, `${field}/identify_capture`, environment, hand)
    hands.push({ hand, input: handInput, enroll, identify, reference: agreedReference(enroll, identify, environment.match_threshold, field) })
  }
  return hands
}

/** One hand's vectors for the duplicate-palm search: the reference and both captures. */
export interface HandProbes {
  hand: Hand
  reference: Int8Array
  enroll: Int8Array
  identify: Int8Array
}

export const handProbes = (hands: readonly PreparedHand[]): HandProbes[] =>
  hands.map((hand) => ({ hand: hand.hand, reference: hand.reference, enroll: probeVector(hand.enroll), identify: probeVector(hand.identify) }))

/** The duplicate-palm search's probes: per hand, its reference and both captures (three a hand, in `hands`' order). */
export const duplicateProbes = (hands: readonly HandProbes[]): Int8Array[] => hands.flatMap((hand) => [hand.reference, hand.enroll, hand.identify])

/** A match of another member found by the duplicate-palm search: the new hand it matched and its score. */
export interface DuplicateMatch {
  hand: Hand
  score: number
}

/**
 * The best match at or above the threshold of a member that `counts` (per probe, the first such
 * member among the hits, best first), or 'unsure' when a probe's `k` hits all reach the threshold
 * without one that counts: one may lie beyond them.
 */
export function duplicateAmong(
  results: ReadonlyArray<ReadonlyArray<GalleryHit>>,
  hands: readonly HandProbes[],
  threshold: number,
  k: number,
  counts: (memberId: string) => boolean,
): DuplicateMatch | null | 'unsure' {
  let worst: DuplicateMatch | null = null
  for (let index = 0; index < results.length; index++) {
    const hits = results[index]
    const found = hits.find((hit) => hit.score < threshold || counts(hit.id))
    if (found === undefined) {
      if (hits.length >= k) return 'unsure'
    } else if (found.score >= threshold && (!worst || found.score > worst.score)) {
      worst = { hand: hands[Math.floor(index / 3)].hand, score: found.score }
    }
  }
  return worst
}

/** The best score of another member against any of the new hands' captures or references. */
export async function findDuplicate(environment: EnvironmentGallery, memberId: string, hands: readonly HandProbes[]): Promise<DuplicateMatch | null> {
  // Four rows always include another member's best row, even when the member's own two lead.
  const k = rowsForMembers(2)
  const results = await environment.gallery.searchBatch(duplicateProbes(hands), { k })
  // Every other member counts, so the first hit that is not the member's own decides.
  return duplicateAmong(results, hands, environment.environment.match_threshold, k, (id) => id !== memberId) as DuplicateMatch | null
}

/** The scan row an enrollment records (its time and outcome filled in when it ends). */
function enrollScan(project: ProjectRow, options: EnrollOptions, posture: ScanInsert['posture']): ScanInsert {
  return {
    id: newId(),
    project_id: project.id,
    caller_type: options.callerType,
    operation_type: 'enroll',
    response_time_ms: 0,
    success: true,
    member_id: null,
    device_id: options.deviceId ?? null,
    posture,
    results: [],
    created_at: new Date(),
  }
}

/**
 * Locks the member's row for the enrollment's transaction; `freshKey`: the data key this
 * enrollment made for a member that had none, stored now unless another process gave it one.
 */
async function lockMemberKey(tx: Queryable, projectId: string, memberId: string, freshKey: Buffer | null): Promise<void> {
  const locked = await memberWithKey(tx, projectId, memberId, { lock: true })
  if (!locked) {
    throw new ServiceError('invalid_reference', `member ${memberId} was deleted during enrollment`, {
      errors: [{ path: '/member_id', message: 'unknown member' }],
    })
  }
  if (freshKey === null) return
  // Another process gave the member a key meanwhile: our ciphertexts are under the wrong one.
  if (locked.wrapped_key) throw new ServiceError('conflict', `member ${memberId} was enrolled concurrently; retry`)
  await setMemberKey(tx, memberId, freshKey)
}

/** Refuses hands that match another member of the environment, recording the refused scan. */
async function refuseDuplicatePalm(
  app: Pick<DomainResources, 'scans'>,
  environment: EnvironmentGallery,
  memberId: string,
  hands: PreparedHand[],
  { scan, started }: { scan: ScanInsert; started: number },
): Promise<void> {
  const duplicate = await findDuplicate(environment, memberId, handProbes(hands))
  if (!duplicate) return
  app.scans.record({
    ...scan,
    success: false,
    results: [{ match_score: duplicate.score, position: 1 }],
    response_time_ms: Math.round(performance.now() - started),
  })
  throw new ServiceError('duplicate_palm', `the ${duplicate.hand} hand matches another member of this environment (score ${duplicate.score.toFixed(4)})`)
}

/** The rows enrollment stores per hand, sealed under the member's key: both captures and the reference. */
export async function enrollMember(
  app: Pick<DomainResources, 'db' | 'galleries' | 'keyring' | 'log' | 'scans' | 'sql'>,
  project: ProjectRow,
  input: EnrollInput,
  options: EnrollOptions,
): Promise<{ member_id: string }> {
  const started = performance.now()
  requireEnvironmentOwner(project)
  if (!input.left_hand && !input.right_hand) {
    throw new ServiceError('invalid_request', 'at least one of left_hand and right_hand is required', {
      errors: [{ path: '/left_hand', message: 'is required when right_hand is absent' }],
    })
  }
  const environmentId = project.environment_id
  // Serialised per environment: the duplicate check and the publish see every earlier enrollment.
  return app.galleries.exclusive(environmentId, async (environment) => {
    const hands = prepareHands(input, environment.environment)
    const member = await memberWithKey(app.sql, project.id, input.member_id)
    if (!member) {
      throw new ServiceError('invalid_reference', `member ${input.member_id} does not exist in project ${project.id}`, {
        errors: [{ path: '/member_id', message: 'unknown member' }],
      })
    }
    const scan = enrollScan(project, options, hands[0].input.palm_position ?? null)
    // A member created by another path (a bulk import, a direct insert) gets its data key now.
    const freshKey = member.wrapped_key ? null : newMemberKey(app.keyring, environment.environment, member.id)
    const wrappedKey = freshKey?.wrapped ?? member.wrapped_key!
    const key = freshKey?.key ?? unwrapMemberKey(app.keyring, environment.environment, member.id, wrappedKey)
    const rows = sealMemberHands(key, member.id, environmentId, hands)

    const completedAt = new Date()
    let published = false
    let changeSeq = 0
    try {
      await app.sql.begin(async (tx) => {
        // Other processes' enrollments of this environment wait here until we commit, and the
        // ones they committed before are read into the gallery, so the duplicate check sees them all.
        await lockEnvironmentGallery(tx, environmentId)
        await app.galleries.catchUp(environment, tx)
        await refuseDuplicatePalm(app, environment, member.id, hands, { scan, started })
        await lockMemberKey(tx, project.id, member.id, freshKey ? wrappedKey : null)
        const captures = await replaceHandTemplates(tx, member.id, options.replaceAllHands ? [...HANDS] : hands.map((hand) => hand.hand), rows)
        await markMemberEnrolled(tx, member.id, captures, completedAt)
        await insertScans(tx, [{ ...scan, response_time_ms: Math.round(performance.now() - started), created_at: completedAt }])
        await enqueueEvent(tx, {
          projectId: project.id,
          eventType: 'enrollment.completed',
          data: { session_id: options.sessionId ?? null, member_id: member.id, device_id: options.deviceId ?? null, completed_at: timestamp(completedAt) },
          occurredAt: completedAt,
        })
        if (options.inTransaction) await options.inTransaction(tx as unknown as Sql)
        changeSeq = await recordGalleryChange(tx, environmentId, member.id)
        // Last: nothing after this can fail but the COMMIT itself, which the catch below undoes.
        published = true
        if (options.replaceAllHands) await app.galleries.syncMember(environment, member.id, tx)
        else for (const hand of hands) app.galleries.upsert(environment, member.id, hand.hand, hand.reference)
      })
    } catch (error) {
      if (published) {
        await app.galleries
          .syncMember(environment, member.id)
          .catch((syncError) => app.log.error({ err: syncError, member_id: member.id }, 'enroll: gallery could not be restored after a failed commit'))
      }
      throw error
    }
    app.galleries.applied(environmentId, changeSeq)
    await app.galleries.announce(environmentId, member.id).catch((error) => app.log.warn({ err: error }, 'enroll: gallery notification failed'))
    await wakeDispatcher(app.db).catch((error) => app.log.warn({ err: error }, 'enroll: webhook dispatcher wake-up failed'))
    return { member_id: member.id }
  })
}
