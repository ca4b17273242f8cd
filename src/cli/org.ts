// `palmvein org create`: an organization with its first admin, made without a token (the first
// organization of a new service has nobody to create it through the API).
import { Command } from 'commander'
import { loadConfig } from '../config.js'
import { organizationResource } from '../http/resources/organizations.js'
import { newId } from '../ids.js'
import { openDatabase } from '../store/engine/database.js'
import { migrate } from '../store/migrate.js'
import { insertOrganization } from '../store/organizations.js'

async function createOrganization(options: { name: string; admin: string; platform?: boolean }): Promise<void> {
  const db = await openDatabase(loadConfig())
  try {
    await migrate(db.sql)
    const row = await insertOrganization(db.sql, { id: newId(), name: options.name, kind: options.platform ? 'platform' : 'customer' }, options.admin)
    console.log(JSON.stringify(organizationResource(row), null, 2))
  } finally {
    await db.close()
  }
}

export const orgCommand = () =>
  new Command('org')
    .description('organizations')
    .addCommand(
      new Command('create')
        .description('create an organization with that admin; print it as JSON')
        .requiredOption('--name <name>', "the organization's name")
        .requiredOption('--admin <subject>', 'the subject (token sub) of its first admin')
        .option('--platform', 'a platform organization (it may own shared environments), not a customer')
        .action(createOrganization),
    )
