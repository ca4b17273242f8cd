// A TCP proxy between the service and PostgreSQL that a test can cut: `refuse` closes every
// connection and refuses new ones (a stopped server), `blackhole` accepts and keeps connections but
// forwards nothing either way (a silent network), `refuse-new` refuses new connections but keeps
// forwarding the open ones (a server at its connection limit), `open` forwards again.
import net from 'node:net'

export type ProxyMode = 'open' | 'refuse' | 'refuse-new' | 'blackhole'

export interface TcpProxy {
  port: number
  mode: ProxyMode
  /** The proxy's own ports towards the server: PostgreSQL's pg_stat_activity.client_port of its connections. */
  upstreamPorts(): number[]
  set(mode: ProxyMode): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'open'
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>()
  const accept = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host)
    const pair = { client, upstream }
    pairs.add(pair)
    const forward = (from: net.Socket, to: net.Socket) => from.on('data', (chunk) => { if (mode !== 'blackhole') to.write(chunk) })
    forward(client, upstream)
    forward(upstream, client)
    const end = () => { pairs.delete(pair); client.destroy(); upstream.destroy() }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  }
  let server: net.Server | null = null
  let port = 0
  const listen = () => new Promise<void>((resolve, reject) => {
    server = net.createServer(accept)
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      port = (server!.address() as net.AddressInfo).port
      resolve()
    })
  })
  const stopListening = () => new Promise<void>((resolve) => {
    if (!server) return resolve()
    server.close(() => resolve())
    server = null
  })
  await listen()

  return {
    get port() { return port },
    get mode() { return mode },
    upstreamPorts: () => [...pairs].flatMap(({ upstream }) => (upstream.localPort ? [upstream.localPort] : [])),
    async set(next) {
      if (next === 'refuse') {
        await Promise.all([stopListening(), ...[...pairs].map(({ client, upstream }) => { client.destroy(); upstream.destroy() })])
      } else if (next === 'refuse-new') {
        // Not awaited: close() calls back only once the connections kept open have ended.
        server?.close()
        server = null
      } else if (!server) await listen()
      mode = next
    },
    async close() {
      mode = 'refuse'
      for (const { client, upstream } of pairs) { client.destroy(); upstream.destroy() }
      await stopListening()
    },
  }
}
