// TypeBox emits JSON Schema (draft 2019+); OpenAPI 3.0 speaks an older dialect. This turns one
// into the other: `const` → single-value `enum`, numeric exclusive bounds → boolean flags, a null
// branch → `nullable`, unions of literals → `enum`, and schemas with an `$id` → shared components
// (referenced when identical, inlined when a variant such as Nullable() changed them).
type Json = Record<string, unknown>

// Keywords OpenAPI 3.0 Schema Objects accept; anything else (TypeBox's $id, $schema, ...) is dropped.
const KEPT = new Set([
  'title',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'enum',
  'type',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'items',
  'properties',
  'additionalProperties',
  'description',
  'format',
  'default',
  'nullable',
  'readOnly',
  'writeOnly',
  'example',
  'deprecated',
])

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

export class SchemaComponents {
  readonly schemas: Record<string, Json> = {}

  /** The OpenAPI 3.0 form of a JSON Schema; `$id`s become components. */
  convert(input: unknown): Json {
    const schema = JSON.parse(JSON.stringify(input ?? {})) as Json
    return this.walk(schema)
  }

  private walk(schema: Json): Json {
    const id = typeof schema.$id === 'string' ? schema.$id : null
    const converted = this.convertOne(schema)
    if (!id) return converted
    const known = this.schemas[id]
    if (!known) {
      this.schemas[id] = converted
      return { $ref: `#/components/schemas/${id}` }
    }
    return JSON.stringify(known) === JSON.stringify(converted) ? { $ref: `#/components/schemas/${id}` } : converted
  }

  private convertOne(schema: Json): Json {
    const out: Json = {}
    for (const [key, value] of Object.entries(schema)) {
      if (!KEPT.has(key)) continue
      if (key === 'properties' && isObject(value)) {
        out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, this.walk(property as Json)]))
      } else if (key === 'items') {
        out.items = Array.isArray(value) ? { anyOf: value.map((item) => this.walk(item as Json)) } : this.walk(value as Json)
      } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
        out[key] = value.map((branch) => this.walk(branch as Json))
      } else if ((key === 'additionalProperties' || key === 'not') && isObject(value)) {
        out[key] = this.walk(value)
      } else if (key === 'type' && Array.isArray(value)) {
        const types = value.filter((type) => type !== 'null')
        if (types.length !== value.length) out.nullable = true
        if (types.length === 1) out.type = types[0]
        else out.anyOf = types.map((type) => ({ type }))
      } else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
        out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value
        out[key] = true
      } else {
        out[key] = value
      }
    }
    if ('const' in schema) {
      out.enum = [schema.const]
      out.type ??=
        schema.const === null ? undefined : typeof schema.const === 'number' ? (Number.isInteger(schema.const) ? 'integer' : 'number') : typeof schema.const
    }
    if (schema.type === 'null' && !('const' in schema)) {
      delete out.type
      out.nullable = true
      out.enum = [null]
    }
    return simplifyUnion(out)
  }
}

/** anyOf of literals of one type → enum; a `null` branch → nullable. */
function simplifyUnion(schema: Json): Json {
  const branches = schema.anyOf as Json[] | undefined
  if (!branches) return schema
  const isNull = (branch: Json) => Array.isArray(branch.enum) && branch.enum.length === 1 && branch.enum[0] === null
  const rest = branches.filter((branch) => !isNull(branch))
  const out: Json = { ...schema }
  if (rest.length !== branches.length) out.nullable = true
  const literal = (branch: Json) => Array.isArray(branch.enum) && Object.keys(branch).every((key) => ['enum', 'type', 'description'].includes(key))
  if (rest.length && rest.every(literal) && new Set(rest.map((branch) => branch.type)).size === 1) {
    delete out.anyOf
    out.type = rest[0].type
    out.enum = rest.flatMap((branch) => branch.enum as unknown[])
    return out
  }
  if (rest.length === 1 && rest.length !== branches.length) {
    delete out.anyOf
    return { ...rest[0], ...out, nullable: true }
  }
  out.anyOf = rest
  return out
}
