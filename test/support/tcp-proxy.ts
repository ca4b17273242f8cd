// A TCP proxy between the service and PostgreSQL that a test can cut: `refuse` closes every
// connection and refuses new ones (a stopped server), `blackhole` accepts and keeps connections but
// forwards nothing either way (a silent network), `refuse-new` refuses new connections but keeps
// forwarding the open ones (a server at its connection limit), `pause` holds what either side
// sends and delivers it when the proxy opens again (a server too loaded to answer for a while),
// `open` forwards again. `blackholeWhenSent` turns the proxy silent the moment a client sends a
// given text (a query naming a table): a stall at an exact step, whatever the timing.
import net from 'node:net'

export type ProxyMode = 'open' | 'refuse' | 'refuse-new' | 'blackhole' | 'pause'

export interface TcpProxy {
  port: number
  mode: ProxyMode
  /** The proxy's own ports towards the server: PostgreSQL's pg_stat_activity.client_port of its connections. */
  upstreamPorts(): number[]
  /** Resolves when a client has connected (at once if one has). */
  firstConnection(): Promise<void>
  set(mode: ProxyMode): Promise<void>
  /** Switches to `blackhole` when a client's bytes contain `text` (that chunk is not forwarded); resolves then. */
  blackholeWhenSent(text: string): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'open'
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>()
  // What a paused proxy holds, in arrival order, for the socket it is bound for.
  let held: Array<{ to: net.Socket; chunk: Buffer }> = []
  let trigger: { text: string; fired: () => void } | null = null
  let connected: () => void = () => {}
  const firstConnection = new Promise<void>((resolve) => {
    connected = resolve
  })
  const accept = (client: net.Socket) => {
    connected()
    const upstream = net.connect(target.port, target.host)
    const pair = { client, upstream }
    pairs.add(pair)
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (trigger && from === client && chunk.includes(trigger.text)) {
          mode = 'blackhole'
          trigger.fired()
          trigger = null
        }
        if (mode === 'pause') held.push({ to, chunk })
        else if (mode !== 'blackhole') to.write(chunk)
      })
    forward(client, upstream)
    forward(upstream, client)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  }
  let server: net.Server | null = null
  let port = 0
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer(accept)
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port
        resolve()
      })
    })
  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve()
      server.close(() => resolve())
      server = null
    })
  await listen()

  return {
    get port() {
      return port
    },
    get mode() {
      return mode
    },
    upstreamPorts: () => [...pairs].flatMap(({ upstream }) => (upstream.localPort ? [upstream.localPort] : [])),
    firstConnection: () => firstConnection,
    async set(next) {
      if (next === 'refuse') {
        await Promise.all([
          stopListening(),
          ...[...pairs].map(({ client, upstream }) => {
            client.destroy()
            upstream.destroy()
          }),
        ])
      } else if (next === 'refuse-new') {
        // Not awaited: close() calls back only once the connections kept open have ended.
        server?.close()
        server = null
      } else if (!server) await listen()
      mode = next
      if (next === 'open') {
        for (const { to, chunk } of held) if (!to.destroyed) to.write(chunk)
        held = []
      }
    },
    blackholeWhenSent: (text) =>
      new Promise<void>((fired) => {
        trigger = { text, fired }
      }),
    async close() {
      mode = 'refuse'
      for (const { client, upstream } of pairs) {
        client.destroy()
        upstream.destroy()
      }
      await stopListening()
    },
  }
}
