// The palm objects of the spec ("Palm capture objects") and the identify answer, shared by the
// biometrics routes and the Device-Com terminal routes so both validate and document them alike.
import { MAX_CANDIDATES } from '../../domain/identification.js'
import { Nullable, Type } from '../schema.js'
import { PalmPositionSchema } from './scans.js'

const Capture = (description: string) => Type.String({
  minLength: 1, maxLength: 8192,
  description: `${description}: a PVT1 template, base64url without padding (standard base64 with padding also accepted)`,
})
const Silhouette = Type.String({ maxLength: 262_144, description: 'opaque base64 outline of the hand; stored encrypted with the enrollment, never used for matching' })

export const EnrollHand = Type.Object({
  enroll_capture: Capture('the enrollment capture'),
  identify_capture: Capture('a second capture of the same hand'),
  silhouette: Type.Optional(Nullable(Silhouette)),
  palm_position: Type.Optional(Nullable(PalmPositionSchema)),
}, { additionalProperties: false })

export const IdentifyPalmSchema = Type.Object({
  identify_capture: Capture('the capture to identify'),
  silhouette: Type.Optional(Nullable(Silhouette)),
  palm_position: Type.Optional(Nullable(PalmPositionSchema)),
}, { additionalProperties: false })

const Candidate = Type.Object({
  member_id: Type.String({ format: 'uuid' }),
  match_score: Type.Number({ minimum: 0, maximum: 1 }),
  hand: Type.Union([Type.Literal('left'), Type.Literal('right')]),
})

export const IdentifyResultSchema = Type.Object({
  status: Type.Union([Type.Literal('Found'), Type.Literal('Ambiguous'), Type.Literal('NotFound')], {
    description: "Found: the best member scores at or above the environment's match_threshold and the runner-up is below it or at least `margin` lower; Ambiguous: two members pass within `margin`; NotFound otherwise",
  }),
  member_id: Nullable(Type.String({ format: 'uuid', description: 'the member found; null unless Found' })),
  match_score: Type.Number({ minimum: 0, maximum: 1, description: 'cosine score of the best member (0 on an empty gallery)' }),
  hand: Nullable(Type.Union([Type.Literal('left'), Type.Literal('right')], { description: 'extension: the hand that matched; null unless Found' })),
  candidates: Type.Optional(Type.Array(Candidate, { description: 'extension: the best k members, best first; only when ?k= is given' })),
}, { $id: 'IdentifyResult' })

/** `?k=`: also return the best k members as candidates. */
export const CandidatesQuery = Type.Object({
  k: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CANDIDATES, description: `extension: also return the best k members as candidates (1..${MAX_CANDIDATES})` })),
}, { additionalProperties: false })
