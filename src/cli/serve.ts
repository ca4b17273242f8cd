// `palmvein serve`: the service, until SIGTERM or SIGINT.
import { Command } from 'commander'
import { loadConfig } from '../config.js'
import { createLogger } from '../log.js'
import { serviceMallocArenas } from '../runtime/malloc-arenas.js'
import { start } from '../server.js'
import { isDatabaseUnreachable } from '../store/engine/availability.js'

/**
 * The service's own process gives its garbage back when quiet (runtime/idle-memory-release.ts).
 * Not a program that starts the service inside itself: a release collects that program's whole
 * heap and trims its C heap, blocking its event loop for as long as its heap takes.
 */
const IDLE_MEMORY_RELEASE_MS = 10_000

async function serve(): Promise<void> {
  // Capped by the bin before the program loaded (runtime/malloc-arenas.ts).
  const arenas = serviceMallocArenas()
  const config = loadConfig(process.env.PALMVEIN_IDLE_MEMORY_RELEASE_MS === undefined ? { idleMemoryReleaseMs: IDLE_MEMORY_RELEASE_MS } : {})
  const log = createLogger(config)
  // postgres.js leaves a rejection unhandled when a connection dies while it fetches types (its
  // first exchange): during a database outage, or a stall while the service boots (it waits for
  // the database then), that is expected, not a reason to stop. Watched from before the boot.
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnreachable(reason)) {
      log.debug({ err: reason }, 'database connection lost during setup')
      return
    }
    log.fatal({ err: reason }, 'unhandled rejection')
    process.exit(1)
  })
  // Installed before the boot: in a container this is PID 1, where a signal without a handler
  // does nothing, and a boot may wait for its database indefinitely. Stopped during the boot, the
  // process exits at once: nothing has been acknowledged yet, and every boot step is safe to cut.
  let service: Awaited<ReturnType<typeof start>> | null = null
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    if (!service) {
      log.info(`${signal} during the boot: stopping`)
      process.exit(0)
    }
    service.app.log.info(`${signal}: shutting down`)
    service.close().then(
      () => process.exit(0),
      (error) => {
        service!.app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  if (arenas !== null) log.info(`Memory: ${arenas === 1 ? 'one malloc arena' : `${arenas} malloc arenas`} (MALLOC_ARENA_MAX sets another number)`)
  service = await start({ config, log })
  if (!config.jwksUrl && !config.jwtPublicKey) {
    console.log(
      `\npalmvein is running at ${service.url}\nGet an admin token:  npx palmvein token --sub admin@example.com\nCreate its organization:  npx palmvein org create --name "My org" --admin admin@example.com\n`,
    )
  }
}

export const serveCommand = () =>
  new Command('serve')
    .description(
      'run the service (creates the data directory on first start); configured by the environment (PORT, HOST, DATABASE_URL, PALMVEIN_*: see the README)',
    )
    .action(serve)
