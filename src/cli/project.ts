// `palmvein project plan`: the platform operator sets a project's plan (DECISIONS.md "Tenancy and
// control": organization admins create projects on the self-service plans only and cannot change
// a plan). Prints the project as the API shows it.
import { Command } from 'commander'
import { CommandRefused } from './errors.js'
import { loadConfig } from '../config.js'
import { setProjectPlan } from '../domain/tenants/organizations.js'
import { ServiceError } from '../errors.js'
import { projectResource } from '../http/resources/projects.js'
import { isUuid } from '../ids.js'
import { PLAN_IDS, type PlanId } from '../plans.js'
import { openDatabase } from '../store/engine/database.js'
import { migrate } from '../store/migrate.js'

async function runProjectPlan(projectId: string | undefined, plan: string | undefined): Promise<void> {
  if (!projectId || !isUuid(projectId)) throw new CommandRefused('--project must be a project id (a UUID)')
  if (!plan || !PLAN_IDS.includes(plan as PlanId)) throw new CommandRefused(`--plan must be one of ${PLAN_IDS.join(', ')}`)
  const db = await openDatabase(loadConfig())
  try {
    await migrate(db.sql)
    const project = await setProjectPlan({ sql: db.sql }, projectId, plan as PlanId).catch((error: unknown) => {
      if (error instanceof ServiceError) throw new CommandRefused(error.message)
      throw error
    })
    console.log(JSON.stringify(projectResource(project)))
  } finally {
    await db.close()
  }
}

export const projectCommand = () =>
  new Command('project').description("projects: the platform operator's actions").addCommand(
    new Command('plan')
      .description("set a project's plan (its rate, daily limit and headcount); prints the project as JSON")
      .requiredOption('--project <project_id>', 'the project')
      .requiredOption('--plan <plan>', PLAN_IDS.join(', '))
      .action((options: { project: string; plan: string }) => runProjectPlan(options.project, options.plan)),
  )
