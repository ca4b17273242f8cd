// The report's Markdown tables and the number formats their cells share.

export const ms = (value: number | null) => (value === null || !Number.isFinite(value) ? 'n/a' : value < 10 ? value.toFixed(2) : value.toFixed(1))
export const ratio = (value: number | null) => (value === null || !Number.isFinite(value) ? '' : `${value.toFixed(2)}×`)

/** `align`: one letter a column, `l` or `r` (numbers read best right-aligned). */
export function table(header: string[], rows: string[][], align: string): string {
  const lines = [`| ${header.join(' | ')} |`, `|${[...align].map((side) => (side === 'r' ? '---:' : '---')).join('|')}|`]
  for (const row of rows) lines.push(`| ${row.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`)
  return lines.join('\n')
}
