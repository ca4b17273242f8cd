// The README's TypeScript walkthrough block, for the test that runs it and the script that type-checks it.
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

/** The markdown file holding the `<!-- client-walkthrough -->` ts block. */
export const WALKTHROUGH_MARKDOWN = fileURLToPath(new URL('../README.md', import.meta.url))

export async function walkthroughBlock(): Promise<{ markdown: string; code: string }> {
  const markdown = await readFile(WALKTHROUGH_MARKDOWN, 'utf8')
  const match = /<!-- client-walkthrough -->\n```ts\n([\s\S]*?)\n```/.exec(markdown)
  if (!match) throw new Error(`${WALKTHROUGH_MARKDOWN} has no <!-- client-walkthrough --> ts block`)
  return { markdown, code: match[1] }
}
