// A strict XML well-formedness check for the report's SVG charts (no XML parser is installed, and
// a browser shows nothing at all for a malformed SVG). It covers what our generator can get wrong:
// one root element, balanced and correctly nested tags, well-formed attributes without
// duplicates, and no bare `<` or `&` in text or attribute values. It does not validate against
// the SVG schema. Throws an Error naming the offset; returns the element names in document order.

const NAME = /^[A-Za-z_:][A-Za-z0-9_.:-]*/
const ENTITY = /^&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);/

function checkCharacterData(text: string, offset: number, where: string): void {
  for (let index = 0; index < text.length; index++) {
    const character = text[index]
    if (character === '<') throw new Error(`bare "<" in ${where} at offset ${offset + index}`)
    if (character === '&' && !ENTITY.test(text.slice(index))) throw new Error(`bare "&" in ${where} at offset ${offset + index}`)
  }
  if (where === 'text' && text.includes(']]>')) throw new Error(`"]]>" in text at offset ${offset}`)
}

export function checkWellFormedXml(xml: string): string[] {
  const stack: string[] = []
  const elements: string[] = []
  let position = 0
  let rootClosed = false

  const fail = (message: string): never => {
    throw new Error(`${message} at offset ${position}`)
  }

  if (xml.startsWith('<?xml')) {
    const end = xml.indexOf('?>')
    if (end < 0) fail('unterminated XML declaration')
    position = end + 2
  }
  while (position < xml.length) {
    const next = xml.indexOf('<', position)
    const text = xml.slice(position, next < 0 ? xml.length : next)
    if (stack.length === 0 && text.trim() !== '') fail('text outside the root element')
    checkCharacterData(text, position, 'text')
    if (next < 0) break
    position = next

    if (xml.startsWith('<!--', position)) {
      const end = xml.indexOf('-->', position + 4)
      if (end < 0) fail('unterminated comment')
      if (xml.slice(position + 4, end).includes('--')) fail('"--" inside a comment')
      position = end + 3
      continue
    }
    if (xml.startsWith('<![CDATA[', position)) {
      if (stack.length === 0) fail('CDATA outside the root element')
      const end = xml.indexOf(']]>', position)
      if (end < 0) fail('unterminated CDATA section')
      position = end + 3
      continue
    }
    if (xml.startsWith('<!', position) || xml.startsWith('<?', position)) fail('unexpected declaration or processing instruction')

    const closing = xml[position + 1] === '/'
    let cursor = position + (closing ? 2 : 1)
    const name = NAME.exec(xml.slice(cursor))?.[0]
    if (!name) fail('tag without a valid name')
    cursor += name!.length

    if (closing) {
      const rest = /^\s*>/.exec(xml.slice(cursor))
      if (!rest) fail(`malformed closing tag </${name}`)
      const open = stack.pop()
      if (open !== name) fail(`</${name}> closes <${open ?? 'nothing'}>`)
      if (stack.length === 0) rootClosed = true
      position = cursor + rest![0].length
      continue
    }

    if (rootClosed || (stack.length === 0 && elements.length > 0)) fail(`second root element <${name}>`)
    elements.push(name!)
    const attributes = new Set<string>()
    while (true) {
      const space = /^\s*/.exec(xml.slice(cursor))![0]
      cursor += space.length
      if (xml.startsWith('/>', cursor)) {
        cursor += 2
        if (stack.length === 0) rootClosed = true
        break
      }
      if (xml[cursor] === '>') {
        cursor += 1
        stack.push(name!)
        break
      }
      if (cursor >= xml.length) {
        position = cursor
        fail(`unterminated tag <${name}`)
      }
      if (space.length === 0) {
        position = cursor
        fail(`attributes of <${name}> not separated by whitespace`)
      }
      const attribute = NAME.exec(xml.slice(cursor))?.[0]
      if (!attribute) {
        position = cursor
        fail(`malformed attribute in <${name}>`)
      }
      if (attributes.has(attribute!)) {
        position = cursor
        fail(`duplicate attribute ${attribute} in <${name}>`)
      }
      attributes.add(attribute!)
      cursor += attribute!.length
      const equals = /^\s*=\s*/.exec(xml.slice(cursor))
      if (!equals) {
        position = cursor
        fail(`attribute ${attribute} of <${name}> has no value`)
      }
      cursor += equals![0].length
      const quote = xml[cursor]
      if (quote !== '"' && quote !== "'") {
        position = cursor
        fail(`unquoted value of ${attribute} in <${name}>`)
      }
      const end = xml.indexOf(quote, cursor + 1)
      if (end < 0) {
        position = cursor
        fail(`unterminated value of ${attribute} in <${name}>`)
      }
      checkCharacterData(xml.slice(cursor + 1, end), cursor + 1, `attribute ${attribute}`)
      cursor = end + 1
    }
    position = cursor
  }
  if (stack.length) fail(`unclosed <${stack.at(-1)}>`)
  if (elements.length === 0) fail('no root element')
  return elements
}
