// Key sets: one wrapping per master key, found by key id; a bare wrapping from before key sets
// still opens with the key that made it.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { open, seal } from '../../src/keys/keyring.js'
import { createMasterKeys, encodeKeySet, masterKeyId, parseKeySet } from '../../src/keys/master-keys.js'

describe('master key sets', () => {
  const key = randomBytes(32)
  const other = randomBytes(32)
  const secret = randomBytes(32)

  it("wraps under the key's id and opens only with a key it names, bound to its context", () => {
    const master = createMasterKeys(key, { seal, open })
    expect(master.id).toBe(masterKeyId(key))
    expect(master.id).toMatch(/^[0-9a-f]{16}$/)
    const blob = master.wrap(secret, 'environment:a')
    expect([...parseKeySet(blob)!.keys()]).toEqual([master.id])
    expect(master.open(blob, 'environment:a').equals(secret)).toBe(true)
    expect(() => master.open(blob, 'environment:b')).toThrow()
    expect(() => createMasterKeys(other, { seal, open }).open(blob, 'environment:a')).toThrow(/not by this process's/)
  })

  it('opens a bare wrapping made before key sets, and finds its wrapping among several', () => {
    const master = createMasterKeys(key, { seal, open })
    expect(parseKeySet(seal(key, secret, 'x'))).toBeNull()
    expect(master.open(seal(key, secret, 'x'), 'x').equals(secret)).toBe(true)
    const both = encodeKeySet(
      new Map([
        [masterKeyId(other), seal(other, secret, 'x')],
        [master.id, seal(key, secret, 'x')],
      ]),
    )
    expect(master.open(both, 'x').equals(secret)).toBe(true)
    expect(() => parseKeySet(Buffer.concat([both, Buffer.from([0])]))).toThrow(/damaged key set/)
  })
})
