// The certificate and key of PALMVEIN_TLS_*, read and checked at boot: an unreadable file or a pair
// that does not make a TLS context stops the boot with a message that names the setting.
import fs from 'node:fs'
import tls from 'node:tls'
import type { TlsConfig } from '../../config.js'

export interface TlsMaterial {
  cert: Buffer
  key: Buffer
  passphrase?: string
  minVersion: 'TLSv1.3' | 'TLSv1.2'
}

export function readPem(setting: string, file: string): Buffer {
  try {
    return fs.readFileSync(file)
  } catch (error) {
    throw new Error(`${setting}: cannot read ${file}: ${(error as Error).message}`)
  }
}

export function loadTls(config: TlsConfig): TlsMaterial {
  const material: TlsMaterial = {
    cert: readPem('PALMVEIN_TLS_CERT_FILE', config.certFile),
    key: readPem('PALMVEIN_TLS_KEY_FILE', config.keyFile),
    ...(config.passphrase ? { passphrase: config.passphrase } : {}),
    minVersion: config.minVersion,
  }
  try {
    tls.createSecureContext(material)
  } catch (error) {
    throw new Error(`PALMVEIN_TLS_CERT_FILE / PALMVEIN_TLS_KEY_FILE: not a usable certificate and key (${(error as Error).message})`)
  }
  return material
}
