// A piscina pool on one of this folder's worker modules, from dist/ (.js) or, under vitest and
// tsx, from the .ts source (loaded through tsx). The boot's decrypt threads and an import's
// threads are such pools, alive for one job.
import { Piscina } from 'piscina'

const runsFromSource = import.meta.url.endsWith('.ts')

/** `module` is the worker's file name without extension, e.g. 'import-prepare'. */
export function createThreadPool<Task, Result>(module: string, threads: number): Piscina<Task, Result> {
  return new Piscina<Task, Result>({
    filename: new URL(`./${module}.${runsFromSource ? 'ts' : 'js'}`, import.meta.url).href, minThreads: threads, maxThreads: threads,
    ...(runsFromSource ? { execArgv: ['--import', 'tsx'] } : {}),
  })
}
