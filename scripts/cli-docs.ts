// `npm run docs:cli`: writes docs/cli.md from the CLI's command definitions (src/cli/reference.ts).
import fs from 'node:fs'
import { cliReference } from '../src/cli/reference.js'

fs.writeFileSync(new URL('../docs/cli.md', import.meta.url), await cliReference())
