// What a deduplication reads (a register of palms) and what it finds (pairs of palms of two owners).

/** The palms of a register, numbered 0..count-1. */
export interface PalmRegister {
  readonly count: number
  readonly dimension: number
  /** The palm's int8 vector; undefined if it has gone (it is then left out). */
  vector(palm: number): Int8Array | undefined
  /** Palms of the same owner (one member's two hands) are never a pair. */
  owner(palm: number): number
}

/** The best-scoring palms of one pair of owners; `a` has the lower owner number. */
export interface PalmPair {
  a: number
  b: number
  score: number
  /**
   * The nearest of the pair's two searches that found it: 0 when one palm is stored in the cell
   * the other is nearest to, probes - 1 when it was found only in the last cell searched (the
   * margin by which it was not missed; the bench reports the largest).
   */
  rank: number
}
