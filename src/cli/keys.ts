// `palmvein keys rotate-master` and `palmvein keys retire-master`: master key rotation (the
// procedure is in the README). With the master key in the data directory (no
// PALMVEIN_MASTER_KEY), rotate-master also writes the new key into that file once the database
// holds its wrappings, so the next start uses it.
import { Command } from 'commander'
import { CommandRefused } from './errors.js'
import { withCliSession } from './session.js'
import { parseMasterKey, secretFromEnv } from '../config.js'
import { loadMasterKey } from '../keys/keyring.js'
import { RotationRefused, retireMasterKey, rotateMasterKey } from '../keys/master-key-rotation.js'
import { replaceFileDurably } from '../store/durable-files.js'

async function runKeys(subcommand: 'rotate-master' | 'retire-master'): Promise<void> {
  const raw = subcommand === 'rotate-master' ? secretFromEnv('PALMVEIN_NEW_MASTER_KEY') : null
  if (subcommand === 'rotate-master' && !raw)
    throw new CommandRefused(
      'rotate-master reads the new master key from PALMVEIN_NEW_MASTER_KEY or the file PALMVEIN_NEW_MASTER_KEY_FILE names (32 bytes, base64; `openssl rand -base64 32` makes one)',
    )
  const next = subcommand === 'rotate-master' ? parseMasterKey(raw!, 'PALMVEIN_NEW_MASTER_KEY') : null
  await withCliSession(async (session) => {
    const master = await loadMasterKey(session.config)
    try {
      if (next) {
        const rotated = await rotateMasterKey(session.db.sql, master.key, next)
        if (master.source !== 'PALMVEIN_MASTER_KEY') await replaceFileDurably(master.source, `${next.toString('base64')}\n`)
        process.stdout.write(JSON.stringify(rotated) + '\n')
        process.stderr.write(
          `palmvein keys: every master-wrapped key now opens with key ${rotated.new_key_id} too. ${
            master.source !== 'PALMVEIN_MASTER_KEY'
              ? `${master.source} holds the new key now; restart the service`
              : process.env.PALMVEIN_MASTER_KEY_FILE
                ? `Put the new key in ${process.env.PALMVEIN_MASTER_KEY_FILE} (PALMVEIN_MASTER_KEY_FILE) for each process and restart it`
                : 'Restart each process with PALMVEIN_MASTER_KEY set to the new key'
          }, then run \`palmvein keys retire-master\` with the new key.\n`,
        )
      } else {
        const retired = await retireMasterKey(session.db.sql, master.key)
        process.stdout.write(JSON.stringify(retired) + '\n')
        process.stderr.write(
          `palmvein keys: key ${retired.retired_key_id} opens nothing in this database any more; destroy its copies (backups taken before now still need it).\n`,
        )
      }
    } catch (error) {
      if (error instanceof RotationRefused) throw new CommandRefused(error.message)
      throw error
    }
  })
}

export const keysCommand = () =>
  new Command('keys')
    .description('master key rotation (the procedure is in the README)')
    .addCommand(
      new Command('rotate-master')
        .description(
          're-wrap every environment key under PALMVEIN_NEW_MASTER_KEY (or _FILE) as well (the old and the new master key both work until retire-master)',
        )
        .action(() => runKeys('rotate-master')),
    )
    .addCommand(
      new Command('retire-master').description("with the new key as PALMVEIN_MASTER_KEY: drop the old key's wrappings").action(() => runKeys('retire-master')),
    )
