// Strings in UTF-16 code-unit order: the same on every machine. localeCompare follows the
// process's locale (an audit record's canonical form, or the shard order cluster nodes must agree
// on, could differ between two hosts) and, on its first call, maps ICU's collation data into the
// process (2.6 MiB of RSS for the service).
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
