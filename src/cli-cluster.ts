// `palmvein cluster status`: the cluster as the database sees it (live nodes, each shard's
// replicas, warnings for shards with fewer than wanted), as JSON on stdout; exit 1 with warnings.
// Each live node is asked whether it answers: one that does not is reported at once.
import { clusterShape, loadConfig } from './config.js'
import { clusterStatus } from './cluster/status.js'
import { CommandRefused } from './cli-session.js'
import { openDatabase } from './store/engine/database.js'
import { migrate } from './store/migrate.js'

const STATUS_PROBE_MS = 3_000

export async function runClusterStatus(): Promise<number> {
  const config = loadConfig()
  if (!config.databaseUrl) throw new CommandRefused('cluster mode runs on PostgreSQL: set DATABASE_URL to the cluster\'s database')
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
