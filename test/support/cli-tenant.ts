// The setting of the CLI's member commands' tests: a running service on a fresh database, a tenant
// with its project, the environment a CLI child needs to join that database, and a scratch folder
// for input files. Registers its own beforeAll/afterAll; the fields are set once they have run.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { createTestStorage, type TestStorage } from './database.js'
import { createPalmTenant, type PalmTenant } from './palms.js'
import { bootService, type TestService } from './service.js'

export interface CliTenant {
  storage: TestStorage
  svc: TestService
  tenant: PalmTenant
  /** PALMVEIN_DATA_DIR and DATABASE_URL for runCli. */
  env: Record<string, string | undefined>
  /** A path in the scratch folder. */
  file(name: string): string
  /** Writes NDJSON lines (objects are stringified) into the scratch folder; returns the path. */
  writeLines(name: string, lines: ReadonlyArray<string | object>): Promise<string>
}

export function useCliTenant(subject: string): CliTenant {
  const fixture = {} as CliTenant
  let dir = ''
  beforeAll(async () => {
    fixture.storage = await createTestStorage()
    await fixture.storage.handOver()
    fixture.svc = await bootService({ storage: fixture.storage })
    fixture.tenant = await createPalmTenant(fixture.svc, subject)
    fixture.env = { PALMVEIN_DATA_DIR: fixture.storage.dataDir, DATABASE_URL: fixture.storage.databaseUrl ?? undefined }
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-cli-'))
  }, 120_000)
  afterAll(async () => {
    await fixture.svc?.stop()
    await fixture.storage?.cleanup()
    if (dir) await fs.rm(dir, { recursive: true, force: true })
  })
  fixture.file = (name) => path.join(dir, name)
  fixture.writeLines = async (name, lines) => {
    const file = fixture.file(name)
    await fs.writeFile(file, lines.map((entry) => (typeof entry === 'string' ? entry : JSON.stringify(entry))).join('\n') + '\n')
    return file
  }
  return fixture
}
