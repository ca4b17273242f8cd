// Which IP addresses a webhook may reach. Every resolved address must be public unicast; the
// ranges below are refused (IANA special-purpose registries, RFC 6890 and successors). IPv6 that
// embeds an IPv4 address (IPv4-mapped, NAT64 well-known prefix, 6to4) is judged by the IPv4
// address inside, so `[::ffff:10.0.0.1]` is as private as `10.0.0.1`.
import net from 'node:net'

export type AddressCategory =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'unspecified'
  | 'documentation'
  | 'cloud-metadata'
  | 'reserved'

const IPV4_RANGES: Array<[string, number, AddressCategory]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.169.254', 32, 'cloud-metadata'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]

// Checked after the IPv4-embedding prefixes have been unwrapped. Order matters: the first match
// names the category, so the narrow cloud-metadata address precedes unique-local.
const IPV6_RANGES: Array<[string, number, AddressCategory]> = [
  ['::1', 128, 'loopback'],
  ['::', 128, 'unspecified'],
  ['::', 96, 'reserved'], // deprecated IPv4-compatible addresses
  ['fd00:ec2::254', 128, 'cloud-metadata'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64
  ['100::', 64, 'reserved'], // discard-only
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['2001::', 23, 'reserved'], // IETF protocol assignments: Teredo, ORCHID, benchmarking
]

function compile(ranges: Array<[string, number, AddressCategory]>, family: 'ipv4' | 'ipv6'): Array<[net.BlockList, AddressCategory]> {
  return ranges.map(([address, prefix, category]) => {
    const list = new net.BlockList()
    list.addSubnet(address, prefix, family)
    return [list, category]
  })
}

const IPV4_LISTS = compile(IPV4_RANGES, 'ipv4')
const IPV6_LISTS = compile(IPV6_RANGES, 'ipv6')
const GLOBAL_UNICAST = new net.BlockList()
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6')

/** The 16 bytes of an IPv6 address (zone id dropped), or null when it is not one. */
export function ipv6Bytes(address: string): Uint8Array | null {
  let text = address.toLowerCase()
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  if (!net.isIPv6(text)) return null
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  let groups: string[]
  const gap = text.indexOf('::')
  if (gap >= 0) {
    const head = text.slice(0, gap) ? text.slice(0, gap).split(':') : []
    const rest = text.slice(gap + 2) ? text.slice(gap + 2).split(':') : []
    groups = [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest]
  } else {
    groups = text.split(':')
  }
  const bytes = new Uint8Array(16)
  groups.forEach((group, index) => {
    const value = parseInt(group, 16)
    bytes[index * 2] = value >> 8
    bytes[index * 2 + 1] = value & 0xff
  })
  return bytes
}

const startsWith = (bytes: Uint8Array, prefix: number[]): boolean => prefix.every((value, index) => bytes[index] === value)
const dotted = (bytes: Uint8Array, offset: number): string => Array.from(bytes.subarray(offset, offset + 4)).join('.')

const IPV4_MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]
const NAT64_WELL_KNOWN = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]
const SIX_TO_FOUR = [0x20, 0x02]

/** The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), or null. */
export function embeddedIpv4(bytes: Uint8Array): string | null {
  if (startsWith(bytes, IPV4_MAPPED) || startsWith(bytes, NAT64_WELL_KNOWN)) return dotted(bytes, 12)
  if (startsWith(bytes, SIX_TO_FOUR)) return dotted(bytes, 2)
  return null
}

/**
 * The category of a non-public address, or null when the address is public unicast and may be
 * contacted. Anything that is not a valid IP address is 'reserved' (fail closed).
 */
export function classifyAddress(address: string): AddressCategory | null {
  if (net.isIPv4(address)) {
    for (const [list, category] of IPV4_LISTS) if (list.check(address, 'ipv4')) return category
    return null
  }
  const bytes = ipv6Bytes(address)
  if (!bytes) return 'reserved'
  const inner = embeddedIpv4(bytes)
  if (inner !== null) return classifyAddress(inner)
  const canonical = Array.from({ length: 8 }, (_, index) => ((bytes[index * 2] << 8) | bytes[index * 2 + 1]).toString(16)).join(':')
  for (const [list, category] of IPV6_LISTS) if (list.check(canonical, 'ipv6')) return category
  return GLOBAL_UNICAST.check(canonical, 'ipv6') ? null : 'reserved'
}
