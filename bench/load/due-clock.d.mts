// Types of due-clock.mjs for the TypeScript tests.
/** Calls `fire(index, due)` for request 0 … total-1, request i at `start + i * interval` (performance.now() times); resolves once the last has been fired. */
export function fireOnSchedule(options: { start: number; interval: number; total: number; fire: (index: number, due: number) => void }): Promise<void>
