// The palm objects of the spec ("Palm capture objects") and the identify answer, shared by the
// biometrics routes and the Device-Com terminal routes so both validate and document them alike.
import { MAX_CANDIDATES } from '../../domain/identification/identification.js'
import { TEMPLATE_DIMENSIONS } from '@palmvein/matcher'
import { Nullable, pattern, Text, Type, withErrorCode } from '../schema.js'
import { PalmPositionSchema } from './scans.js'

// A PVT1 template is a 24-byte header and `dimension` int8 or float32 components: 152 to 2072
// bytes, so 203 characters (base64url without padding) to 2764 (standard base64 with padding).
const TEMPLATE_BYTES = { min: 24 + Math.min(...TEMPLATE_DIMENSIONS), max: 24 + 4 * Math.max(...TEMPLATE_DIMENSIONS) }
const CAPTURE_LENGTH = { minLength: Math.ceil((TEMPLATE_BYTES.min * 4) / 3), maxLength: 4 * Math.ceil(TEMPLATE_BYTES.max / 3) }
const CAPTURE_PATTERN = pattern('^[A-Za-z0-9_+/-]*={0,2}$', 'is not base64: expected base64url without padding or standard base64 with padding')

// The alphabet and the length are the document's; one alphabet, canonical padding and the PVT1
// content (magic, CRC, and the environment's dimension, extractor and minimum quality) are
// domain/identification/captures.ts's, which the document can only say in words. Either way 400 capture_invalid.
const Capture = (description: string) =>
  withErrorCode(
    'capture_invalid',
    Type.String({
      ...CAPTURE_LENGTH,
      pattern: CAPTURE_PATTERN,
      description:
        `${description}: a PVT1 template, base64url without padding (standard base64 with padding also accepted), one alphabet, canonical; ` +
        "its dimension, extractor and quality must fit the environment's (else 400 capture_invalid)",
    }),
  )
const Silhouette = Text({ maxLength: 262_144, description: 'opaque base64 outline of the hand; stored encrypted with the enrollment, never used for matching' })

export const EnrollHand = Type.Object(
  {
    enroll_capture: Capture('the enrollment capture'),
    identify_capture: Capture('a second capture of the same hand'),
    silhouette: Type.Optional(Nullable(Silhouette)),
    palm_position: Type.Optional(Nullable(PalmPositionSchema)),
  },
  { additionalProperties: false },
)

/** The enroll bodies' rule: at least one of left_hand and right_hand, and not null. */
export const AT_LEAST_ONE_HAND = {
  anyOf: (['left_hand', 'right_hand'] as const).map((hand) => ({ required: [hand], properties: { [hand]: { type: 'object' } } })),
}

export const IdentifyPalmSchema = Type.Object(
  {
    identify_capture: Capture('the capture to identify'),
    silhouette: Type.Optional(Nullable(Silhouette)),
    palm_position: Type.Optional(Nullable(PalmPositionSchema)),
  },
  { additionalProperties: false },
)

const Candidate = Type.Object({
  member_id: Type.String({ format: 'uuid' }),
  match_score: Type.Number({ minimum: 0, maximum: 1 }),
  hand: Type.Union([Type.Literal('left'), Type.Literal('right')]),
})

export const IdentifyResultSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('Found'), Type.Literal('Ambiguous'), Type.Literal('NotFound')], {
      description:
        "Found: the best member scores at or above the environment's match_threshold and the runner-up is below it or at least `margin` lower; Ambiguous: two members pass within `margin`; NotFound otherwise",
    }),
    member_id: Nullable(Type.String({ format: 'uuid', description: 'the member found; null unless Found' })),
    match_score: Type.Number({ minimum: 0, maximum: 1, description: 'cosine score of the best member (0 on an empty gallery)' }),
    hand: Nullable(Type.Union([Type.Literal('left'), Type.Literal('right')], { description: 'extension: the hand that matched; null unless Found' })),
    candidates: Type.Optional(Type.Array(Candidate, { description: 'extension: the best k members, best first; only when ?k= is given' })),
  },
  { $id: 'IdentifyResult' },
)

/** `?k=`: also return the best k members as candidates. */
export const CandidatesQuery = Type.Object(
  {
    k: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_CANDIDATES, description: `extension: also return the best k members as candidates (1..${MAX_CANDIDATES})` }),
    ),
  },
  { additionalProperties: false },
)
