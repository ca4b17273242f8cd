// The package version, read once from package.json (the service reports it in logs and OpenAPI).
import { readFileSync } from 'node:fs'

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
