// undici, loaded the first time a webhook is delivered or a peer is called. Imported at boot it cost
// every service ~15 MiB of resident memory (its modules and its WebAssembly HTTP parser: 45.6 ->
// 60.6 MiB in a bare Node 20), though a service without webhooks or a cluster never uses it.
let loading: Promise<typeof import('undici')> | undefined

export function undici(): Promise<typeof import('undici')> {
  loading ??= import('undici')
  return loading
}
