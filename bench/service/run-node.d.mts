// Types of run-node.mjs for the TypeScript benchmarks (bench/cluster.ts).
export function runNode(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  options?: {
    onLine?: (line: string) => void
    follow?: 'stdout' | 'stderr'
    okCodes?: number[]
  },
): Promise<{ code: number; lines: string[] }>
