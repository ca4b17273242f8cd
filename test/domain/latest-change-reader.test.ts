// Identify's freshness check shares change-log reads, but never hands a caller a read that began
// before its call (it could miss a DELETE that answered just before).
import { describe, expect, it } from 'vitest'
import { createLatestChangeReader } from '../../src/domain/galleries/latest-change-reader.js'

function controlledReads() {
  const started: Array<{ environmentId: string; resolve: (seq: number) => void; reject: (error: Error) => void }> = []
  const read = (environmentId: string) =>
    new Promise<number>((resolve, reject) => {
      started.push({ environmentId, resolve, reject })
    })
  return { started, read }
}
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('latest change reader', () => {
  it('gives callers that arrive while a read runs the next read, started after the running one ends; one of each', async () => {
    const { started, read } = controlledReads()
    const latest = createLatestChangeReader(read)
    const first = latest('e1')
    const [second, third] = [latest('e1'), latest('e1')]
    expect(started).toHaveLength(1)
    started[0].resolve(5)
    expect(await first).toBe(5)
    await settle()
    expect(started).toHaveLength(2)
    started[1].resolve(7)
    expect(await Promise.all([second, third])).toEqual([7, 7])
    // Idle again: the next caller starts its own read at once.
    const fourth = latest('e1')
    expect(started).toHaveLength(3)
    started[2].resolve(9)
    expect(await fourth).toBe(9)
  })

  it('keeps environments apart, and a failed read fails only its own callers', async () => {
    const { started, read } = controlledReads()
    const latest = createLatestChangeReader(read)
    const [a, b] = [latest('a'), latest('b')]
    expect(started.map((entry) => entry.environmentId)).toEqual(['a', 'b'])
    const queued = latest('a')
    started[0].reject(new Error('database cut'))
    await expect(a).rejects.toThrow('database cut')
    await settle()
    started[2].resolve(3)
    started[1].resolve(4)
    expect(await Promise.all([queued, b])).toEqual([3, 4])
  })
})
