// @palmvein/matcher: the embeddable 1:N palm template matcher. Imports nothing from the rest of
// the service, so any Node service can use it on its own.
export { createMatcher, type Matcher, type MatcherOptions } from './matcher.js'
export type {
  ExactAuditCounts,
  Gallery,
  GallerySettings,
  Hit,
  PartitionOption,
  RowPage,
  RowsInput,
  SearchMode,
  SearchOptions,
  UpsertOptions,
} from './gallery.js'
export type { IdKind } from './id-index.js'
export type { VectorInput } from './vector-input.js'
export { availableBackends, type BackendChoice, type BackendInfo, type BackendName } from './backend.js'
export {
  decodeTemplate,
  encodeTemplate,
  templateToInt8,
  TemplateError,
  TEMPLATE_DIMENSIONS,
  type DecodeOptions,
  type Hand,
  type Template,
  type TemplateErrorCode,
  type TemplateInput,
} from './template.js'
export { quantizeFloat, normSquaredInt8 } from './quantize.js'
export { crc32c } from './crc32c.js'
export {
  createSyntheticPopulation,
  DEMO_CAPTURES,
  type SyntheticOptions,
  type SyntheticPopulation,
  type IdentityProfile,
  type TemplateOptions as SyntheticTemplateOptions,
} from './synthetic.js'
