// An import line without a member_id gets one derived from its text (a UUID v5 of the project and
// the line): the same file imported again names the same members, so the second run skips what
// the first imported instead of refusing it as duplicate palms (or, with --allow-duplicates,
// importing everyone twice). An edited line is another member. The domain sees a line that named
// its member_id; lines are rewritten as text, not parsed here (the import's threads parse them).
import { v5 as uuidv5 } from 'uuid'

const NEWLINE = 0x0a
/** `"member_id"` as a key: a line that holds it keeps its own (or is refused as the API would). */
const NAMED = /"member_id"\s*:/

/** `line` (without its "\n") with a member_id derived from it, when it is an object without one. */
export function withStableMemberId(line: string, projectId: string): string {
  const open = line.search(/\S/)
  if (open === -1 || line[open] !== '{' || NAMED.test(line)) return line
  const rest = line.slice(open + 1)
  const id = uuidv5(line.trimEnd(), projectId)
  return `${line.slice(0, open)}{"member_id":"${id}"${/^\s*\}/.test(rest) ? '' : ','}${rest}`
}

/** The input with every line passed through withStableMemberId. */
export async function* stableMemberIds(input: AsyncIterable<Buffer | string>, projectId: string): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0)
  for await (const chunk of input) {
    const bytes: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    const buffer: Buffer = pending.length ? Buffer.concat([pending, bytes]) : bytes
    const end = buffer.lastIndexOf(NEWLINE)
    if (end === -1) {
      pending = buffer
      continue
    }
    pending = buffer.subarray(end + 1)
    yield Buffer.from(
      buffer
        .subarray(0, end)
        .toString('utf8')
        .split('\n')
        .map((line) => withStableMemberId(line, projectId))
        .join('\n') + '\n',
    )
  }
  if (pending.length) yield Buffer.from(withStableMemberId(pending.toString('utf8'), projectId))
}
