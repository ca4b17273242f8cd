// Handing out an environment's gallery: 503 while its boot load runs, loaded on first use for an
// environment created later, and `exclusive` to run a change after every earlier one of the
// environment.
import { ServiceError } from '../../errors.js'
import type { EnvironmentGallery } from './galleries-api.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { loadEntry, newEntry } from './gallery-load.js'

export interface GalleryRegistry {
  acquire(environmentId: string): Promise<EnvironmentGallery>
  exclusive<T>(environmentId: string, task: (environment: EnvironmentGallery) => Promise<T>): Promise<T>
}

export function createGalleryRegistry(context: GalleriesContext): GalleryRegistry {
  const { entries, log } = context

  /** Created after boot (or first seen here): small enough to load while the caller waits. */
  function loadOnDemand(environmentId: string): Entry {
    const entry = newEntry(false, null, 0)
    entry.ready = loadEntry(context, entry, environmentId)
    entry.chain = entry.ready.catch(() => {})
    entries.set(environmentId, entry)
    entry.ready.catch((error) => {
      entries.delete(environmentId)
      log.error({ err: error, environment_id: environmentId }, 'Galleries: on-demand load failed')
    })
    return entry
  }

  async function acquire(environmentId: string): Promise<EnvironmentGallery> {
    if (context.closed()) throw new ServiceError('unavailable', 'the service is shutting down')
    const entry = entries.get(environmentId) ?? loadOnDemand(environmentId)
    if (entry.loading && entry.blocking) {
      const progress = `${entry.loaded}/${entry.total} rows`
      throw new ServiceError('unavailable', `the gallery of environment ${environmentId} is loading (${progress}); retry shortly`, { retryAfter: 5 })
    }
    try {
      await entry.ready
    } catch (error) {
      if (error instanceof ServiceError) throw error
      throw new ServiceError('unavailable', `the gallery of environment ${environmentId} could not be loaded; retry shortly`, { retryAfter: 5, cause: error })
    }
    await entry.settingsRead
    return { environment: entry.environment!, gallery: entry.distributed ?? entry.gallery! }
  }

  function exclusive<T>(environmentId: string, task: (environment: EnvironmentGallery) => Promise<T>): Promise<T> {
    return acquire(environmentId).then((environment) => {
      const entry = entries.get(environmentId)!
      const result = entry.chain.then(() => task(environment))
      entry.chain = result.catch(() => {})
      return result
    })
  }

  return { acquire, exclusive }
}
