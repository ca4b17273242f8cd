import { describe, expect, it } from 'vitest'
import { classifyAddress, ipv6Bytes } from '../../src/webhooks/address-policy.js'

describe('address policy', () => {
  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['169.254.169.254', 'cloud-metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.100.100.200', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'unique-local'],
    ['fc12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'cloud-metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378::1', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud-metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'cloud-metadata'],
    ['2002:c0a8:0101::1', 'private'],
    ['::10.0.0.1', 'reserved'],
    ['not-an-address', 'reserved'],
  ])('refuses %s as %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category)
  })

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:0808:0808::1',
  ])('allows the public address %s', (address) => {
    expect(classifyAddress(address)).toBeNull()
  })

  it('parses IPv6 forms into bytes', () => {
    expect(Array.from(ipv6Bytes('::1')!)).toEqual([...Array(15).fill(0), 1])
    expect(Array.from(ipv6Bytes('::ffff:1.2.3.4')!.subarray(10))).toEqual([0xff, 0xff, 1, 2, 3, 4])
    expect(Array.from(ipv6Bytes('2001:db8::8:800:200c:417a')!)).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0x08, 0x08, 0x00, 0x20, 0x0c, 0x41, 0x7a])
    expect(ipv6Bytes('10.0.0.1')).toBeNull()
  })
})
