// Ids are UUID v7 cut from a pooled random source: unique, valid, and strictly increasing within
// one process even when many are made in one millisecond (indexes and keyset pages rely on it).
import { version } from 'uuid'
import { expect, it } from 'vitest'
import { isUuid, newId } from '../src/ids.js'

it('makes unique, valid, strictly increasing version 7 ids', () => {
  const ids = Array.from({ length: 100_000 }, () => newId())
  expect(new Set(ids).size).toBe(ids.length)
  expect(ids.every((id, index) => isUuid(id) && version(id) === 7 && (index === 0 || ids[index - 1] < id))).toBe(true)
})
