// `palmvein console --sub <subject>`: a one-time sign-in link to the web console, for the local
// development issuer (which must not mint tokens for anyone who can reach the port). Short-lived
// and single use: auth/console-sign-in.ts.
import { Command } from 'commander'
import { issueConsoleSignInLink } from '../auth/console-sign-in.js'
import { loadConfig } from '../config.js'
import { ServiceError } from '../errors.js'
import { openDatabase } from '../store/engine/database.js'
import { migrate } from '../store/migrate.js'
import { wholeNumber } from './arguments.js'
import { refuseMissingDataDirectory } from './data-directory.js'
import { CommandRefused } from './errors.js'

async function signInLink(options: { sub: string; url?: string; ttl: number }): Promise<void> {
  const config = loadConfig()
  refuseMissingDataDirectory(config)
  const baseUrl = options.url ?? `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`
  const db = await openDatabase(config)
  try {
    await migrate(db.sql)
    const link = await issueConsoleSignInLink(db.sql, config, options.sub, baseUrl, options.ttl)
    console.log(link.url)
    console.error(`palmvein console: the link signs in ${options.sub} once, until ${link.expiresAt.toISOString()}`)
  } catch (error) {
    if (error instanceof ServiceError) throw new CommandRefused(error.message)
    throw error
  } finally {
    await db.close()
  }
}

export const consoleCommand = () =>
  new Command('console')
    .description(
      'print a one-time sign-in link to the web console at /console/ (the local development issuer only: ' +
        'refused when tokens come from PALMVEIN_JWKS_URL or PALMVEIN_JWT_PUBLIC_KEY)',
    )
    .requiredOption('--sub <subject>', 'the subject (token sub) the link signs in, e.g. admin@example.com')
    .option('--url <url>', 'where the browser reaches the service (default: http://127.0.0.1:PORT)')
    .option('--ttl <seconds>', 'how long the link stays valid', wholeNumber(1, 86_400), 600)
    .action(signInLink)
