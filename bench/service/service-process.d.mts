// Types of service-process.mjs for the TypeScript benchmarks (bench/cluster.ts).
export interface StartedService {
  url: string
  pid: number
  bootSeconds: number
  health: string
  stop(): Promise<void>
  kill(): Promise<void>
}
export function freePort(): Promise<number>
export function residentMiB(pid: number): number | null
export function startService(options: {
  env: Record<string, string>
  onProgress?: (loaded: number, total: number) => void
  timeoutMs?: number
  port?: number
  ready?: (health: string) => boolean
}): Promise<StartedService>
export function matcherFromHealth(text: string): { backend: string; isa: string } | null
