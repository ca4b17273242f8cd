// What the snapshot restore (gallery-snapshot-restore.ts) and writer (gallery-snapshot-writer.ts)
// share: where the files are, whether snapshots are on, and the snapshot each environment has on disk.
import path from 'node:path'
import type { Config } from '../../config.js'
import type { EnvironmentRow } from '../../store/organizations.js'
import type { GalleriesContext } from './galleries-context.js'

export const snapshotDirectory = (config: Pick<Config, 'snapshotDir' | 'dataDir'>): string => config.snapshotDir ?? path.join(config.dataDir, 'snapshots')

export interface SnapshotState {
  directory: string
  /** Snapshots on: an interval set, and not cluster mode (a node's shards are assigned at run time). */
  enabled: boolean
  /** Per environment, the change number and time of the snapshot on disk. */
  written: Map<string, { seq: number; at: number }>
  environmentKeyOf(environment: EnvironmentRow): Buffer
}

export function snapshotState(context: GalleriesContext): SnapshotState {
  const { config, keyring, distribution } = context.options
  return {
    directory: snapshotDirectory(config),
    enabled: config.snapshotIntervalMs > 0 && !distribution,
    written: new Map(),
    environmentKeyOf: (environment) => keyring.environmentKey(environment.id, environment.wrapped_key),
  }
}
