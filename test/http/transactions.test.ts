import { parse } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, type Terminal } from '../support/terminals.js'

const COLUMNS = [
  'id',
  'transaction_type',
  'transaction_state',
  'timestamp',
  'base_amount',
  'tip_amount',
  'total_amount',
  'fee',
  'currency',
  'vendor',
  'vendor_payment_reference',
  'vendor_merchant_id',
  'merchant_name',
  'merchant_icon_path',
  'address_line1',
  'address_line2',
  'address_city',
  'address_state',
  'address_country',
  'address_postal_code',
  'latitude',
  'longitude',
]

/** A Transaction of the JSON list, flattened the way the export's columns are. */
function flatten(transaction: any): string[] {
  const cell = (value: unknown) => (value === null || value === undefined ? '' : String(value))
  return [
    transaction.id,
    transaction.transaction_type,
    transaction.transaction_state,
    transaction.timestamp,
    transaction.amount.base,
    transaction.amount.tip,
    transaction.amount.total,
    transaction.fee,
    transaction.currency,
    transaction.vendor,
    transaction.vendor_payment_reference,
    transaction.vendor_merchant_id,
    transaction.merchant.name,
    transaction.merchant.icon_path,
    transaction.address.line1,
    transaction.address.line2,
    transaction.address.city,
    transaction.address.state,
    transaction.address.country,
    transaction.address.postal_code,
    transaction.location?.latitude,
    transaction.location?.longitude,
  ].map(cell)
}

describe('transactions: recorded by terminals, listed and exported', () => {
  let svc: TestService
  let tenant: Tenant
  let terminal: Terminal
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'transactions-admin@example.com', { plan: 'sandbox' })
    await liftRateLimits(svc, tenant.projectId)
    terminal = await linkTerminal(svc, tenant.token, tenant.projectId, { mode: 'payment' })
  })
  afterAll(async () => {
    await svc.close()
  })

  const record = (body: unknown) => svc.request('POST', '/v1/device-com/transactions', { auth: terminal.deviceToken, body })
  const window = (from: string, to: string) => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`

  it('records a transaction with every field and answers the Transaction', async () => {
    const recorded = await record({
      transaction_type: 'payment',
      transaction_state: 'approved',
      amount: { base: 10.5, tip: 1.5, total: 12 },
      location: { latitude: 52.52, longitude: 13.405 },
      timestamp: '2026-03-01T10:00:00.123Z',
      address: { line1: 'Main St 1', line2: 'Floor "2", left', city: 'Berlin', state: 'BE', country: 'DE', postal_code: '10115' },
      merchant: { name: 'Café, Bäckerei\nNord', icon_path: '/icons/cafe.png' },
      vendor_payment_reference: 'ref-1',
      fee: 0.3,
      currency: 'EUR',
      vendor: 'acme-pay',
      vendor_merchant_id: 'm-42',
    })
    expectStatus(recorded, 201)
    expect(recorded.body).toEqual({
      id: expect.any(String),
      transaction_type: 'payment',
      transaction_state: 'approved',
      amount: { base: 10.5, tip: 1.5, total: 12 },
      location: { latitude: 52.52, longitude: 13.405 },
      timestamp: '2026-03-01T10:00:00.123Z',
      address: { line1: 'Main St 1', line2: 'Floor "2", left', city: 'Berlin', state: 'BE', country: 'DE', postal_code: '10115' },
      merchant: { name: 'Café, Bäckerei\nNord', icon_path: '/icons/cafe.png' },
      vendor_payment_reference: 'ref-1',
      fee: 0.3,
      currency: 'EUR',
      vendor: 'acme-pay',
      vendor_merchant_id: 'm-42',
    })
    // The minimum: absent values are null, the timestamp is now.
    const minimal = await record({ transaction_type: 'refund', transaction_state: 'refunded', amount: { base: 3, total: 3 }, currency: 'usd' })
    expectStatus(minimal, 201)
    expect(minimal.body).toMatchObject({
      currency: 'USD',
      amount: { base: 3, tip: null, total: 3 },
      location: null,
      fee: null,
      vendor: null,
      address: { line1: null, line2: null, city: null, state: null, country: null, postal_code: null },
      merchant: { name: null, icon_path: null },
    })
    expect(Math.abs(Date.parse(minimal.body.timestamp) - Date.now())).toBeLessThan(60_000)
  })

  it('lists a window newest first, and the CSV export parses back to the same rows', async () => {
    const times = ['2026-04-01T08:00:00.000Z', '2026-04-01T09:00:00.000Z', '2026-04-01T10:00:00.000Z', '2026-04-02T10:00:00.000Z']
    for (const [index, timestamp] of times.entries()) {
      expectStatus(
        await record({
          transaction_type: 'payment',
          transaction_state: index % 2 ? 'declined' : 'approved',
          amount: { base: index, tip: 0, total: index },
          currency: 'EUR',
          timestamp,
          merchant: { name: index === 1 ? '=HYPERLINK("http://evil")' : `Shop ${index}` },
        }),
        201,
      )
    }
    const query = window('2026-04-01T08:00:00.000Z', '2026-04-01T10:00:00.000Z')
    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions?${query}`, { auth: tenant.orgKey })
    expectStatus(listed, 200)
    expect(listed.body.map((transaction: { timestamp: string }) => transaction.timestamp)).toEqual([times[2], times[1], times[0]])

    const exported = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions/export?${query}`, { auth: tenant.token })
    expectStatus(exported, 200)
    expect(exported.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="transactions-.+\.csv"$/)
    expect(exported.text.endsWith('\r\n')).toBe(true)
    const rows: string[][] = parse(exported.text)
    expect(rows[0]).toEqual(COLUMNS)
    // Identical rows, except that a text cell a spreadsheet would run as a formula is defused.
    const expected = listed.body.map(flatten)
    expected[1][COLUMNS.indexOf('merchant_name')] = `'=HYPERLINK("http://evil")`
    expect(rows.slice(1)).toEqual(expected)
  })

  it('quotes commas, quotes and line breaks per RFC 4180', async () => {
    const query = window('2026-03-01T00:00:00.000Z', '2026-03-01T23:59:59.999Z')
    const exported = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions/export?${query}`, { auth: tenant.orgKey })
    expectStatus(exported, 200)
    expect(exported.text).toContain('"Café, Bäckerei\nNord"')
    expect(exported.text).toContain('"Floor ""2"", left"')
    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions?${query}`, { auth: tenant.orgKey })
    expect(parse(exported.text).slice(1)).toEqual(listed.body.map(flatten))
  })

  it('streams a large range page by page, in the order of the list; an empty range is the header alone', async () => {
    const sql = svc.storage.db.sql
    const base = Date.parse('2025-01-01T00:00:00.000Z')
    // Many rows share a timestamp, so the keyset pages must also order by id.
    const rows = Array.from({ length: 2345 }, (_, index) => ({
      id: newId(),
      project_id: tenant.projectId,
      device_id: terminal.deviceId,
      transaction_type: 'payment',
      transaction_state: 'approved',
      base_amount: index,
      total_amount: index,
      currency: 'EUR',
      timestamp: new Date(base + Math.floor(index / 7) * 1000),
    }))
    for (let start = 0; start < rows.length; start += 500) await sql`INSERT INTO transactions ${sql(rows.slice(start, start + 500))}`
    const query = window('2025-01-01T00:00:00.000Z', '2025-01-31T00:00:00.000Z')
    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions?${query}`, { auth: tenant.orgKey })
    expectStatus(listed, 200)
    expect(listed.body).toHaveLength(2345)
    expect(listed.headers.get('transfer-encoding')).toBe('chunked')
    expect(new Set(listed.body.map((transaction: { id: string }) => transaction.id)).size).toBe(2345)
    const exported = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions/export?${query}`, { auth: tenant.orgKey })
    expectStatus(exported, 200)
    expect(exported.headers.get('transfer-encoding')).toBe('chunked')
    const parsed: string[][] = parse(exported.text)
    expect(parsed).toHaveLength(2346)
    expect(parsed.slice(1)).toEqual(listed.body.map(flatten))

    // A client that goes away mid-stream: the server stops sending and keeps serving others.
    const aborting = await fetch(`${svc.url}/v1/projects/${tenant.projectId}/transactions/export?${query}`, {
      headers: { authorization: `Bearer ${tenant.orgKey}` },
    })
    const reader = aborting.body!.getReader()
    expect((await reader.read()).done).toBe(false)
    await reader.cancel()
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions/export?${query}`, { auth: tenant.orgKey }), 200)

    const empty = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions/export?${window('2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z')}`, {
      auth: tenant.orgKey,
    })
    expectStatus(empty, 200)
    expect(empty.text).toBe(`${COLUMNS.join(',')}\r\n`)
    const emptyList = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions?${window('2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z')}`, {
      auth: tenant.orgKey,
    })
    expectStatus(emptyList, 200)
    expect(emptyList.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(emptyList.body).toEqual([])
  })

  it('refuses bad windows and bad transactions with 400, and another tenant with 404', async () => {
    for (const query of ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from=2026-01-01T00:00:00Z', 'from=yesterday&to=2026-01-01T00:00:00Z']) {
      for (const path of ['transactions', 'transactions/export']) {
        const response = await svc.request('GET', `/v1/projects/${tenant.projectId}/${path}?${query}`, { auth: tenant.orgKey })
        expectStatus(response, 400)
        expect(response.body.code).toBe('invalid_request')
      }
    }
    const valid = { transaction_type: 'payment', transaction_state: 'approved', amount: { base: 1, total: 1 }, currency: 'EUR' }
    for (const body of [
      { ...valid, currency: 'EURO' },
      { ...valid, currency: 'E1R' },
      { ...valid, transaction_type: 'chargeback' },
      { ...valid, amount: { base: -1, total: 1 } },
      { ...valid, location: { latitude: 91, longitude: 0 } },
      { ...valid, member: 'x' },
      { ...valid, timestamp: 'today' },
    ]) {
      const response = await record(body)
      expectStatus(response, 400)
    }
    const stranger = await createTenant(svc, 'transactions-stranger@example.com')
    const foreign = await svc.request('GET', `/v1/projects/${tenant.projectId}/transactions?${window('2026-01-01T00:00:00Z', '2026-12-31T00:00:00Z')}`, {
      auth: stranger.orgKey,
    })
    expectStatus(foreign, 404)
  })
})
