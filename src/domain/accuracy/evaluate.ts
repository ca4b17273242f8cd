// Runs an open-set evaluation with the real matcher: gallery lines become one reference per
// subject and hand (the mean of its captures, as enroll builds it), each probe is searched as
// identify does (a capture flagged with its hand in that hand's partition, else in both), and
// its result is recorded for the metrics of open-set.ts and the decision counts of identify.
import { decodeCaptureText, referenceTemplate, type Capture } from '../identification/captures.js'
import { decide, rowsForMembers, type IdentifyStatus } from '../identification/identify-decision.js'
import { createMatcher, decodeTemplate, templateToInt8, type SearchMode } from '@palmvein/matcher'
import type { OpenSetScores } from './open-set.js'

export type EvalHand = 'left' | 'right'

export interface TemplateLine {
  subject: string
  hand: EvalHand
  role: 'gallery' | 'probe'
  /** PVT1, base64url (or padded base64). */
  capture: string
}

export interface EvalSettings {
  matchThreshold: number
  margin: number
  mode: SearchMode
  /** Matcher worker threads (0: the calling thread). */
  threads: number
}

export interface EvalOutcome extends OpenSetScores {
  /** References in the gallery (subject-hands) and distinct subjects. */
  galleryReferences: number
  gallerySubjects: number
  dimension: number
  /** Decisions at the environment's threshold and margin; Found counted right or wrong. */
  decisions: { mated: Record<IdentifyStatus | 'FoundWrong', number>; nonMated: Record<IdentifyStatus, number> }
}

/** A line the evaluation cannot use; `line` is 1-based. */
export class EvalInputError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`)
  }
}

const CANDIDATE_MEMBERS = 10

function captureOf(line: TemplateLine, number: number): Capture {
  try {
    const bytes = decodeCaptureText(line.capture, '/capture')
    return { bytes, template: decodeTemplate(bytes) }
  } catch (error) {
    throw new EvalInputError(number, `capture: ${(error as Error).message}`)
  }
}

export async function evaluate(lines: Iterable<TemplateLine> | AsyncIterable<TemplateLine>, settings: EvalSettings): Promise<EvalOutcome> {
  const references = new Map<string, { subject: string; hand: EvalHand; captures: Capture[] }>()
  const probes: Array<{ subject: string; hand: EvalHand; capture: Capture }> = []
  let dimension = 0
  let number = 0
  for await (const line of lines) {
    number += 1
    if (
      typeof line?.subject !== 'string' ||
      !line.subject ||
      (line.hand !== 'left' && line.hand !== 'right') ||
      (line.role !== 'gallery' && line.role !== 'probe') ||
      typeof line.capture !== 'string'
    ) {
      throw new EvalInputError(number, 'expected {"subject": string, "hand": "left" | "right", "role": "gallery" | "probe", "capture": PVT1 base64url}')
    }
    const capture = captureOf(line, number)
    dimension ||= capture.template.dimension
    if (capture.template.dimension !== dimension)
      throw new EvalInputError(number, `dimension ${capture.template.dimension}, but earlier captures have ${dimension}`)
    if (line.role === 'probe') {
      probes.push({ subject: line.subject, hand: line.hand, capture })
      continue
    }
    const key = `${line.hand}\u0000${line.subject}`
    let reference = references.get(key)
    if (!reference) references.set(key, (reference = { subject: line.subject, hand: line.hand, captures: [] }))
    reference.captures.push(capture)
  }
  if (references.size === 0) throw new EvalInputError(number, 'no gallery lines: nothing to search')

  const matcher = await createMatcher({ dimension, threads: settings.threads })
  try {
    const gallery = matcher.createGallery()
    for (const reference of references.values()) {
      gallery.upsert(reference.subject, referenceTemplate(reference.captures, '/capture'), { partition: reference.hand })
    }
    const subjects = new Set([...references.values()].map((reference) => reference.subject))
    const outcome: EvalOutcome = {
      mated: [],
      nonMated: [],
      galleryReferences: references.size,
      gallerySubjects: subjects.size,
      dimension,
      decisions: { mated: { Found: 0, FoundWrong: 0, Ambiguous: 0, NotFound: 0 }, nonMated: { Found: 0, Ambiguous: 0, NotFound: 0 } },
    }
    const environment = { match_threshold: settings.matchThreshold, margin: settings.margin }
    // Concurrent searches share the matcher's batches, as concurrent identifies do.
    await Promise.all(
      probes.map(async (probe) => {
        const flagged = probe.capture.template.hand
        const hits = await gallery.search(templateToInt8(probe.capture.template), {
          k: flagged ? CANDIDATE_MEMBERS : rowsForMembers(CANDIDATE_MEMBERS),
          partition: flagged ?? undefined,
          mode: settings.mode,
        })
        const decision = decide(hits, environment)
        const top1Score = decision.members[0]?.match_score ?? 0
        if (subjects.has(probe.subject)) {
          const rank = decision.members.findIndex((member) => member.member_id === probe.subject)
          outcome.mated.push({ top1Score, mateRank: rank === -1 ? null : rank + 1 })
          outcome.decisions.mated[decision.status === 'Found' && decision.member_id !== probe.subject ? 'FoundWrong' : decision.status] += 1
        } else {
          outcome.nonMated.push(top1Score)
          outcome.decisions.nonMated[decision.status] += 1
        }
      }),
    )
    return outcome
  } finally {
    await matcher.close()
  }
}
