// Writes src/generated/openapi.ts from the service's route table (see openapi-types.ts).
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { GENERATED_TYPES, renderOpenApiTypes } from './openapi-types.js'

await writeFile(GENERATED_TYPES, await renderOpenApiTypes())
console.log(`wrote ${fileURLToPath(GENERATED_TYPES)}`)
