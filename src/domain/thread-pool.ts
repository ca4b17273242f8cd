// A piscina pool on a worker module beside its caller, from dist/ (.js) or, under vitest and tsx,
// from the .ts source (loaded through tsx). The boot's decrypt threads and an import's threads are
// such pools, alive for one job.
import { Piscina } from 'piscina'

/**
 * `module` is the worker's file name without extension (e.g. 'import-prepare'), in the folder of
 * `base`, the caller's import.meta.url (whose extension tells source from built code).
 */
export function createThreadPool<Task, Result>(base: string, module: string, threads: number): Piscina<Task, Result> {
  const runsFromSource = base.endsWith('.ts')
  return new Piscina<Task, Result>({
    filename: new URL(`./${module}.${runsFromSource ? 'ts' : 'js'}`, base).href,
    minThreads: threads,
    maxThreads: threads,
    ...(runsFromSource ? { execArgv: ['--import', 'tsx'] } : {}),
  })
}
