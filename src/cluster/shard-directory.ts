// What a search needs to know of the cluster: where each shard can be searched now.

/** Where each shard can be searched now (node.ts keeps it from the leases). */
export interface ShardDirectory {
  readonly selfId: string
  /** Live nodes holding the shard ready, this node included when it serves it. */
  replicas(environmentId: string, shard: number): readonly string[]
  urlOf(nodeId: string): string | undefined
  /** Whether this node serves the shard (its rows are loaded and caught up). */
  servesHere(environmentId: string, shard: number): boolean
  /** Re-reads the replicas from the database, unless a read that started at or after `since` (performance.now()) is under way or done. */
  refresh(since: number): Promise<void>
}
