// `palmvein cluster status`: the cluster as the database sees it (live nodes, each shard's
// replicas, warnings for shards with fewer than wanted), as JSON on stdout; exit 1 with warnings.
// Each live node is asked whether it answers: one that does not is reported at once.
import { Command } from 'commander'
import { clusterShape, loadConfig } from '../config.js'
import { clusterStatus } from '../cluster/status.js'
import { CommandRefused } from './errors.js'
import { openDatabase } from '../store/engine/database.js'
import { migrate } from '../store/migrate.js'

const STATUS_PROBE_MS = 3_000

async function runClusterStatus(): Promise<number> {
  const config = loadConfig()
  if (!config.databaseUrl) throw new CommandRefused("cluster mode runs on PostgreSQL: set DATABASE_URL to the cluster's database")
  const { leaseMs, replicas } = clusterShape()
  const db = await openDatabase(config)
  try {
    await migrate(db.sql)
    // No deadline to meet here: a node slow to answer under load is not reported as gone.
    const status = await clusterStatus(db.sql, leaseMs, replicas, STATUS_PROBE_MS)
    process.stdout.write(JSON.stringify(status, null, 2) + '\n')
    return status.warnings.length ? 1 : 0
  } finally {
    await db.close()
  }
}

export const clusterCommand = () =>
  new Command('cluster').description('cluster mode (PostgreSQL)').addCommand(
    new Command('status')
      .description("the cluster's nodes and each shard's replicas as JSON; exit 1 when a shard has fewer ready replicas than wanted")
      .action(async () => {
        process.exitCode = await runClusterStatus()
      }),
  )
