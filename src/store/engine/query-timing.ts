// postgres.js has no hook for a statement's completion. Its Query is a lazy Promise that starts in
// handle(), which runs once per query (on its first then/catch/finally/execute), so timing wraps
// handle() on the shared prototype, once per process, and reports to every observer.
import type { Sql } from './database.js'

type Observer = (seconds: number) => void

interface QueryPrototype {
  handle(this: QueryLike, ...args: unknown[]): unknown
}
interface QueryLike extends Promise<unknown> {
  executed: boolean
}

const observers = new Set<Observer>()
const wrapped = new WeakSet<object>()

/** Reports each statement's duration to `observer` until the returned function is called. */
export function observeQueries(sql: Sql, observer: Observer): () => void {
  // A query that is never awaited never runs: this one only lends its prototype.
  const prototype = Object.getPrototypeOf(sql`select 1`) as QueryPrototype
  if (!wrapped.has(prototype)) {
    wrapped.add(prototype)
    const handle = prototype.handle
    prototype.handle = function (this: QueryLike, ...args: unknown[]) {
      if (!this.executed && observers.size > 0) {
        const started = performance.now()
        const done = () => {
          const seconds = (performance.now() - started) / 1000
          for (const each of observers) each(seconds)
        }
        // Promise's own then: the Query's would run handle() again.
        Promise.prototype.then.call(this, done, done)
      }
      return handle.apply(this, args)
    }
  }
  observers.add(observer)
  return () => {
    observers.delete(observer)
  }
}
