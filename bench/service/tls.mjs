// HTTPS for bench:http. BENCH_TLS=1 serves the measured service with a certificate: yours
// (BENCH_TLS_CERT_FILE and BENCH_TLS_KEY_FILE) or one made for 127.0.0.1 with openssl. The load
// generators trust BENCH_CA_FILE (by default that certificate itself, which is self-signed): this
// process through undici's global dispatcher, the load children through NODE_EXTRA_CA_CERTS.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Agent, setGlobalDispatcher } from 'undici'

/**
 * A self-signed certificate for `names` (subjectAltName entries, e.g. `IP:127.0.0.1`), valid for a
 * day, written to `certFile` and `keyFile` (default: named after the first name, in `directory`).
 */
export function selfSignedCertificate(directory, names, certFile, keyFile) {
  const base = names[0].replace(/\W+/g, '-')
  certFile ??= path.join(directory, `${base}-cert.pem`)
  keyFile ??= path.join(directory, `${base}-key.pem`)
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      `/CN=${names[0].split(':')[1]}`,
      '-addext',
      `subjectAltName=${names.join(',')}`,
    ],
    { stdio: 'pipe' },
  )
  return { certFile, keyFile }
}

/** The service's TLS settings and the CA the clients trust; null without BENCH_TLS=1. */
export async function benchTls(directory, env = process.env) {
  if (env.BENCH_TLS !== '1') return null
  let certFile = env.BENCH_TLS_CERT_FILE
  let keyFile = env.BENCH_TLS_KEY_FILE
  if (Boolean(certFile) !== Boolean(keyFile))
    throw new Error('set both BENCH_TLS_CERT_FILE and BENCH_TLS_KEY_FILE, or neither (a certificate for 127.0.0.1 is made)')
  if (!certFile) {
    certFile = path.join(directory, 'bench-cert.pem')
    keyFile = path.join(directory, 'bench-key.pem')
    selfSignedCertificate(directory, ['IP:127.0.0.1'], certFile, keyFile)
  }
  const caFile = env.BENCH_CA_FILE || certFile
  const ca = await fs.readFile(caFile, 'utf8')
  setGlobalDispatcher(new Agent({ connect: { ca } }))
  // Read by each load child at its start (they are forked with this environment).
  process.env.NODE_EXTRA_CA_CERTS = caFile
  return { serviceEnv: { PALMVEIN_TLS_CERT_FILE: certFile, PALMVEIN_TLS_KEY_FILE: keyFile }, caFile }
}
