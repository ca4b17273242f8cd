#!/usr/bin/env node
// Lists the functions longer than a limit (80 lines unless told) in the TypeScript the service and
// its packages ship: src/ and packages/*/src. The numeric kernels (Rust, AssemblyScript) are not read.
// Usage: node scripts/long-functions.mjs [limit]   (prints one "lines path:line name" a function, then the count)
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const limit = Number(process.argv[2] ?? 80)
const roots = ['src', ...readdirSync('packages').map((name) => join('packages', name, 'src'))]

function* sourceFiles(folder) {
  let entries
  try {
    entries = readdirSync(folder, { withFileTypes: true })
  } catch {
    return
  }
  for (const entry of entries) {
    const path = join(folder, entry.name)
    if (entry.isDirectory() && entry.name !== 'generated') yield* sourceFiles(path)
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path
  }
}

function nameOf(node) {
  if (node.name) return node.name.getText()
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText()
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`
  return '(anonymous)'
}

const found = []
for (const root of roots) {
  for (const path of sourceFiles(root)) {
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
        const lines = end - start + 1
        if (lines > limit) found.push({ lines, where: `${path}:${start + 1}`, name: nameOf(node) })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
}
found.sort((a, b) => b.lines - a.lines)
for (const { lines, where, name } of found) console.log(`${String(lines).padStart(4)} ${where} ${name}`)
console.log(`${found.length} function(s) over ${limit} lines`)
