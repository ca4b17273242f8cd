// Scrapes a service's /metrics with a Prometheus text parser and reads series from it.
import { getMetricsFromIterator } from 'prom2javascript'
import { expect } from 'vitest'
import type { TestService } from './service.js'

export interface Sample {
  labels: Record<string, string>
  value?: number
  count?: number
}
export interface Family {
  type: string
  data: Sample[]
}

export async function scrape(svc: TestService): Promise<Map<string, Family>> {
  const response = await fetch(svc.service.metricsUrl!)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  // A strict parser: a malformed line throws. prom2javascript 0.2 reads +Inf but not NaN or -Inf,
  // which the format allows (prom-client writes Nan for an event-loop mean with no sample yet):
  // those values become +Inf (read as null); no value the tests read can be one of them.
  const text = (await response.text()).replace(/ (?:NaN|Nan|nan|-Inf)$/gm, ' +Inf')
  const families = (await getMetricsFromIterator(text.split('\n')[Symbol.iterator]())) as Record<string, Family>
  return new Map(Object.entries(families))
}

/** A counter's value, or a histogram's count, for the series whose labels include `labels`. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name)
  const sample = family?.data.find((metric) => Object.entries(labels).every(([key, value]) => metric.labels[key] === value))
  if (!sample) return 0
  return (family!.type === 'histogram' ? sample.count : sample.value) ?? 0
}
