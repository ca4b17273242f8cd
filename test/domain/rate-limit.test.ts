// The lease size of the rate limiter, as a table: exact counting under LEASE_FROM, then a
// hundredth of the limit, bounded by the largest lease.
import { describe, expect, it } from 'vitest'
import { LEASE_FROM, leaseSize } from '../../src/auth/rate-limit.js'
import { PLANS } from '../../src/plans.js'

describe('leaseSize', () => {
  it.each([
    { limit: 5, maxLease: 100, size: 1 },
    { limit: LEASE_FROM - 1, maxLease: 100, size: 1 },
    { limit: LEASE_FROM, maxLease: 100, size: 2 },
    { limit: 1_000, maxLease: 100, size: 10 },
    { limit: 5_000, maxLease: 100, size: 50 },
    { limit: 100_000, maxLease: 100, size: 100 },
    { limit: 10_000_000, maxLease: 100, size: 100 },
    { limit: 5_000, maxLease: 1, size: 1 },
    { limit: 5_000, maxLease: 20, size: 20 },
  ])('a limit of $limit with leases up to $maxLease: $size', ({ limit, maxLease, size }) => {
    expect(leaseSize(limit, maxLease)).toBe(size)
  })

  it.each(Object.values(PLANS))('the $name plan loses under 1 % of its limits to one process', (plan) => {
    for (const limit of [plan.requestsPerMinute, plan.dailyRequestLimit]) {
      expect((leaseSize(limit) - 1) / limit).toBeLessThan(0.01)
    }
  })
})
