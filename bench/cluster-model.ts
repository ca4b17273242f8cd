// The scale-out model of bench:cluster (docs/scale-out.md "The arithmetic"): from this machine's
// measured scan cost per row, the service's fixed cost, the fan-out overhead and the spread of
// the measured latencies, the node count and p95 identify latency of an environment of N members.
// Everything here is modelled; bench/cluster.ts measures its inputs.

/** What a node of the model is: memory for galleries, cores. */
export const MODEL_NODE = { memoryGiB: 64, galleryShare: 0.75, cores: 16 }
// One row (one hand) at d = 256: the int8 vector, its sign bits for two-stage search, ids and maps.
export const BYTES_PER_ROW = 256 + 32 + 32
const REPLICAS = 2
/** The p95 budget the latency-driven node count is for. */
export const P95_BUDGET_MS = 100

export interface ClusterModelInput {
  exactMsPerRow: number
  twoStageMsPerRow: number
  /** The service's own cost of an identify (HTTP, auth, decision, scan record), no scan. */
  baseMs: number
  /** What scatter-gather adds (the node-to-node round trip, the merge). */
  fanOutMs: number
  /** Measured latencies minus their median, sorted: the spread one shard's answer has. */
  spreadMs: number[]
}

export interface ClusterModelRow {
  members: number
  nodes: number
  shards: number
  rowsPerShard: number
  /** A node is usually asked for every shard it holds (the coordinator prefers nodes already asked): it scans all these. */
  rowsPerNode: number
  exact: ModeFigures
  twoStage: ModeFigures
  /** The spread quantile needed (0.95^(1/S)) lies past the measured samples: the sample maximum was used. */
  spreadExtrapolated: boolean
}

export interface ModeFigures {
  scanMs: number
  p95Ms: number
  probesPerSecond: number
  /** Nodes for p95 within P95_BUDGET_MS (more nodes, smaller shares), null when the fixed costs alone exceed it. */
  nodesForBudget: number | null
}

export function modelCluster(input: ClusterModelInput, sizes: number[]): ClusterModelRow[] {
  const usable = MODEL_NODE.memoryGiB * 2 ** 30 * MODEL_NODE.galleryShare
  return sizes.map((members) => {
    const rows = 2 * members
    const nodes = Math.max(REPLICAS, Math.ceil((rows * BYTES_PER_ROW * REPLICAS) / usable))
    // Rendezvous spreads S shards × R replicas evenly: S = nodes gives each node R shards.
    const shards = nodes
    const rowsPerShard = Math.ceil(rows / shards)
    const rowsPerNode = Math.ceil((rows * REPLICAS) / nodes)
    // p95 of the slowest of S answers: each shard's spread at the quantile 0.95^(1/S).
    const q = 0.95 ** (1 / shards)
    const at = Math.floor(q * input.spreadMs.length)
    const spreadExtrapolated = at >= input.spreadMs.length
    const spread = input.spreadMs[Math.min(input.spreadMs.length - 1, at)] ?? 0
    const fixedMs = input.baseMs + input.fanOutMs + spread
    const mode = (msPerRow: number): ModeFigures => {
      const scanMs = rowsPerNode * msPerRow
      // Every probe scans every row once, somewhere: the cluster's cores divided by one probe's scan work.
      const probesPerSecond = (nodes * MODEL_NODE.cores * 1000) / (rows * msPerRow)
      const scanBudget = P95_BUDGET_MS - fixedMs
      const nodesForBudget = scanBudget > 0 ? Math.max(nodes, Math.ceil((rows * REPLICAS * msPerRow) / scanBudget)) : null
      return { scanMs, p95Ms: fixedMs + scanMs, probesPerSecond, nodesForBudget }
    }
    return { members, nodes, shards, rowsPerShard, rowsPerNode, exact: mode(input.exactMsPerRow), twoStage: mode(input.twoStageMsPerRow), spreadExtrapolated }
  })
}

interface ClusterResult {
  started: string
  machine: { cpuModel: string; logicalCpus: number; simd: string[] }
  settings: { members: number; nodes: number; shards: number; replicas: number; probes: number; leaseMs: number }
  scan: { rows: number; exactMsPerRow: number; twoStageMsPerRow: number; backend: string }
  measured: {
    single: { bootSeconds: number; identify: { p50: number; p95: number } }
    cluster: { bootSeconds: number; identify: { p50: number; p95: number }; fanOutOverheadP50Ms: number; decisionsCompared: number; decisionsDiffering: number }
    failover: {
      answersAfterKill: number
      wrong: number
      unavailable: number
      lastUnavailableSeconds: number
      identifyAfterKill: { p95: number }
      rereplicatedSeconds: number | null
    }
  }
  model: ClusterModelRow[]
}

const ms = (value: number) => `${value.toFixed(2)} ms`
const count = (value: number) => Math.round(value).toLocaleString('en-US')

export function clusterReport(result: ClusterResult): string {
  const { settings, measured, scan } = result
  const { machine } = result
  return [
    `# bench:cluster, ${result.started}`,
    '',
    `Machine: ${machine.cpuModel}, ${machine.logicalCpus} CPUs (${machine.simd.join(', ')}). Matcher: ${scan.backend}. Every node runs one matcher thread (${settings.nodes} nodes share this machine's cores).`,
    '',
    `## Measured: ${count(settings.members)} members, ${settings.shards} shards × ${settings.replicas} replicas on ${settings.nodes} nodes, one PostgreSQL`,
    '',
    '| | boot | identify p50 | identify p95 |',
    '|---|---:|---:|---:|',
    `| one node, no cluster mode | ${measured.single.bootSeconds.toFixed(1)} s | ${ms(measured.single.identify.p50)} | ${ms(measured.single.identify.p95)} |`,
    `| cluster (probes spread over the nodes) | ${measured.cluster.bootSeconds.toFixed(1)} s (every shard replicated) | ${ms(measured.cluster.identify.p50)} | ${ms(measured.cluster.identify.p95)} |`,
    '',
    `- Fan-out overhead (cluster p50 − one node's p50): **${ms(measured.cluster.fanOutOverheadP50Ms)}** (target ≤ 3 ms).`,
    `- Decisions: ${measured.cluster.decisionsDiffering} of ${count(measured.cluster.decisionsCompared)} differ from one node's (status and member of every probe compared).`,
    `- Failover (SIGKILL of a node holding shards, probes running on another, lease ${settings.leaseMs} ms): ${count(measured.failover.answersAfterKill)} answers after the kill,`,
    `  **${measured.failover.wrong} wrong**, ${measured.failover.unavailable} × 503 \`shard_unavailable\`${measured.failover.unavailable ? ` (the last ${measured.failover.lastUnavailableSeconds.toFixed(2)} s after the kill)` : ''}, p95 ${ms(measured.failover.identifyAfterKill.p95)};`,
    `  every shard had its replicas again ${measured.failover.rereplicatedSeconds === null ? 'never within the wait' : `${measured.failover.rereplicatedSeconds.toFixed(1)} s after the kill`}.`,
    `- Scan cost per row, one thread: exact ${(scan.exactMsPerRow * 1e6).toFixed(2)} ns, two-stage ${(scan.twoStageMsPerRow * 1e6).toFixed(2)} ns (${count(scan.rows)} rows).`,
    '',
    `## Modelled: node count and p95 identify latency`,
    '',
    `A node of ${MODEL_NODE.memoryGiB} GiB (${MODEL_NODE.galleryShare * 100} % for galleries), ${MODEL_NODE.cores} cores, ${BYTES_PER_ROW} bytes per row (d = 256: int8, sign bits, ids), two rows per member, ${REPLICAS} replicas; shards = nodes (each node holds ${REPLICAS}).`,
    "p95 = the service's own cost + fan-out overhead + the scan of every row a node holds (it is usually asked for all its shards) on one thread, as measured here",
    "(conservative: a node's matcher threads split one scan) + the measured spread at the 0.95^(1/S) quantile (the slowest of S answers).",
    `Throughput: every probe scans every row once somewhere, on one core. "Nodes for p95 ≤ ${P95_BUDGET_MS} ms": more nodes than memory needs, each holding a smaller share.`,
    '',
    `| members | nodes (memory) | shards | rows per node | exact: scan | exact: p95 | exact: probes/s | exact: nodes for p95 ≤ ${P95_BUDGET_MS} ms | two-stage: scan | two-stage: p95 | two-stage: probes/s | two-stage: nodes for p95 ≤ ${P95_BUDGET_MS} ms |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...result.model.map((row) => {
      const star = row.spreadExtrapolated ? '*' : ''
      const figures = (mode: ModeFigures) =>
        `${ms(mode.scanMs)} | ${ms(mode.p95Ms)}${star} | ${count(mode.probesPerSecond)} | ${mode.nodesForBudget === null ? 'out of reach' : count(mode.nodesForBudget)}`
      return `| ${count(row.members)} | ${row.nodes} | ${row.shards} | ${count(row.rowsPerNode)} | ${figures(row.exact)} | ${figures(row.twoStage)} |`
    }),
    '',
    result.model.some((row) => row.spreadExtrapolated) ? '\\* the spread quantile needed lies past the measured samples; their maximum was used.\n' : '',
  ].join('\n')
}
