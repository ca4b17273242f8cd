// An import's thread task (domain/import/import-pool.ts): a batch of lines prepared with the import
// line's wire check (http/resources/import-line.ts). The domain takes that check from here, its
// caller, so it never reaches up into http.
import type { ImportLines } from '../domain/import/import-pool.js'
import { prepareImportLines, type PrepareTask } from '../domain/import/import-prepare.js'
import { parseLineBatch } from '../http/resources/import-line.js'

export const importLines: ImportLines = { parse: parseLineBatch, thread: { base: import.meta.url, module: 'import-thread' } }

// The piscina task.
export default (task: PrepareTask) => prepareImportLines(task, parseLineBatch)
