// Types of scratch-database.mjs for the TypeScript benchmarks (bench/cluster.ts).
export function scratchDatabase(serverUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }>
