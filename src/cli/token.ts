// `palmvein token`: an identity token from the local development issuer (auth/identity-tokens.ts).
import { Command } from 'commander'
import { loadLocalIssuer } from '../auth/identity-tokens.js'
import { loadConfig } from '../config.js'
import { wholeNumber } from './arguments.js'
import { refuseMissingDataDirectory } from './data-directory.js'
import { CommandRefused } from './errors.js'

async function token(options: { sub: string; ttl: number }): Promise<void> {
  const config = loadConfig()
  if (config.jwksUrl || config.jwtPublicKey) {
    throw new CommandRefused('the service verifies tokens from an external issuer (PALMVEIN_JWKS_URL / PALMVEIN_JWT_PUBLIC_KEY); get tokens from that issuer')
  }
  // The issuer's key lives in the data directory: a new one here would sign tokens the service rejects.
  refuseMissingDataDirectory(config)
  console.log(await (await loadLocalIssuer(config)).sign(options.sub, options.ttl))
}

export const tokenCommand = () =>
  new Command('token')
    .description('print an identity token from the local development issuer (its key is in the data directory)')
    .requiredOption('--sub <subject>', "the token's subject (the user it names)")
    .option('--ttl <seconds>', 'lifetime in seconds', wholeNumber(1, 31_536_000), 3600)
    .action(token)
