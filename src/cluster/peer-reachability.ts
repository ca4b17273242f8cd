// Which live nodes answer now: a GET /livez to each, with a short limit. A node killed a moment
// ago still has a heartbeat younger than the lease, so the database alone would keep counting its
// replicas for up to the lease; asking it tells /healthz and `palmvein cluster status` at once.
const LIVEZ_PATH = '/livez'

/** The ids of the nodes that refused, failed or did not answer /livez within `timeoutMs`. */
export async function unreachableNodes(nodes: ReadonlyArray<{ node_id: string; url: string }>, timeoutMs: number, skip?: string): Promise<Set<string>> {
  const unreachable = new Set<string>()
  await Promise.all(
    nodes
      .filter((node) => node.node_id !== skip)
      .map(async (node) => {
        try {
          const response = await fetch(new URL(LIVEZ_PATH, node.url), { signal: AbortSignal.timeout(timeoutMs) })
          await response.body?.cancel()
          if (response.status !== 200) unreachable.add(node.node_id)
        } catch {
          unreachable.add(node.node_id)
        }
      }),
  )
  return unreachable
}
