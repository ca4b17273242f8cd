import { describe, expect, it } from 'vitest'
import { MicroBatcher } from '../src/micro-batcher.js'

function harness(maxBatch = 16) {
  const batches: number[][] = []
  const releases: Array<() => void> = []
  const batcher = new MicroBatcher<number>({
    maxBatch,
    run: (entries) => {
      batches.push(entries)
      return new Promise<void>((resolve) => releases.push(resolve))
    },
  })
  const turn = () => new Promise((resolve) => setImmediate(resolve))
  return { batcher, batches, releases, turn }
}

describe('micro-batcher', () => {
  it('sends a lone search on the next turn', async () => {
    const { batcher, batches, turn } = harness()
    batcher.add(1)
    expect(batches).toEqual([])
    await turn()
    expect(batches).toEqual([[1]])
  })

  it('holds searches that arrive while a batch scans, then sends them together, at most maxBatch per pass', async () => {
    const { batcher, batches, releases, turn } = harness(16)
    batcher.add(0)
    await turn()
    for (let i = 1; i <= 20; i++) batcher.add(i)
    await turn()
    // Nothing leaves beside the batch in flight: it would only queue behind it.
    expect(batches.length).toBe(1)
    releases[0]()
    await turn()
    expect(batches[1]).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    expect(batches.length).toBe(2)
    releases[1]()
    await turn()
    expect(batches[2]).toEqual([17, 18, 19, 20])
  })

  it('flush sends everything at once (close)', async () => {
    const { batcher, batches, turn } = harness(4)
    batcher.add(0)
    await turn()
    for (let i = 1; i <= 6; i++) batcher.add(i)
    batcher.flush()
    expect(batches).toEqual([[0], [1, 2, 3, 4], [5, 6]])
  })
})
