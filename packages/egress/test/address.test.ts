import { describe, expect, test } from '@jest/globals';
import { addressBlockReason, parseAllowlist } from '../src/address.js';

const none = parseAllowlist([]);

describe('address rules', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'ipv4Mapped'],
    ['::ffff:8.8.8.8', 'ipv4Mapped'],
    ['::ffff:169.254.169.254', 'ipv4Mapped'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:a00:1::', '6to4'],
  ])('%s is refused as %s', (address, reason) => {
    expect(addressBlockReason(address, none)).toBe(reason);
  });

  test.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])(
    'public unicast %s is allowed',
    (address) => {
      expect(addressBlockReason(address, none)).toBeNull();
    },
  );

  // IANA's special-purpose registries (IPv4 and IPv6), one address inside each block. All are refused:
  // the non-global ones by rule, and the few marked global (AS112, AMT, ORCHIDv2, drone tags, 6to4
  // relays, NAT64) because they embed other addresses or serve no media.
  test.each([
    ['0.0.0.0/8', '0.1.2.3'],
    ['10.0.0.0/8', '10.200.3.4'],
    ['100.64.0.0/10', '100.127.255.254'],
    ['127.0.0.0/8', '127.9.9.9'],
    ['169.254.0.0/16', '169.254.0.1'],
    ['172.16.0.0/12', '172.20.1.1'],
    ['192.0.0.0/24', '192.0.0.170'],
    ['192.0.0.0/29', '192.0.0.5'],
    ['192.0.2.0/24', '192.0.2.200'],
    ['192.31.196.0/24', '192.31.196.1'],
    ['192.52.193.0/24', '192.52.193.1'],
    ['192.88.99.0/24', '192.88.99.1'],
    ['192.168.0.0/16', '192.168.200.1'],
    ['192.175.48.0/24', '192.175.48.1'],
    ['198.18.0.0/15', '198.19.255.1'],
    ['198.51.100.0/24', '198.51.100.7'],
    ['203.0.113.0/24', '203.0.113.7'],
    ['240.0.0.0/4', '250.1.2.3'],
    ['255.255.255.255/32', '255.255.255.255'],
    ['224.0.0.0/4', '233.1.2.3'],
    ['::1/128', '::1'],
    ['::/128', '::'],
    ['::ffff:0:0/96 (IPv4-mapped)', '::ffff:a9fe:a9fe'],
    ['::/96 (IPv4-compatible, deprecated)', '::a9fe:a9fe'],
    ['::/96 in dotted form', '::169.254.169.254'],
    ['::/96 holding a public IPv4', '::808:808'],
    ['64:ff9b::/96 (NAT64)', '64:ff9b::a9fe:a9fe'],
    ['64:ff9b:1::/48 (local NAT64)', '64:ff9b:1::a00:1'],
    ['100::/64 (discard)', '100::1'],
    ['2001::/23', '2001:100::1'],
    ['2001::/32 (Teredo, embeds an IPv4)', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['2001:1::1/128', '2001:1::1'],
    ['2001:1::2/128', '2001:1::2'],
    ['2001:2::/48', '2001:2::9'],
    ['2001:3::/32', '2001:3::9'],
    ['2001:4:112::/48', '2001:4:112::9'],
    ['2001:10::/28', '2001:10::9'],
    ['2001:20::/28', '2001:20::9'],
    ['2001:30::/28', '2001:30::9'],
    ['2001:db8::/32', '2001:db8:1::1'],
    ['2002::/16 (6to4, embeds an IPv4)', '2002:a9fe:a9fe::1'],
    ['2620:4f:8000::/48', '2620:4f:8000::9'],
    ['3fff::/20', '3fff:fff::1'],
    ['5f00::/16', '5f00::1'],
    ['fc00::/7', 'fdff::1'],
    ['fe80::/10', 'febf::1'],
    ['ff00::/8', 'ff0e::1'],
    ['outside 2000::/3 (unallocated)', '4000::1'],
    ['outside 2000::/3 (::/8 beyond ::/96)', '::1:0:0:1'],
  ])('IANA block %s: %s is refused before any connection', (_block, address) => {
    expect(addressBlockReason(address, none)).toEqual(expect.any(String));
    expect(addressBlockReason(`[${address}]`, none)).toEqual(expect.any(String));
  });

  test('an IPv4-compatible address is named as such, so logs explain the refusal', () => {
    expect(addressBlockReason('::a9fe:a9fe', none)).toBe('ipv4Compatible');
    expect(addressBlockReason('4000::1', none)).toBe('notGlobalUnicast');
  });

  test('anything that is not a literal IP is refused', () => {
    expect(addressBlockReason('localhost', none)).toBe('not an IP address');
    expect(addressBlockReason('0x7f.1', none)).toBe('not an IP address');
  });

  test('the allowlist exempts exact addresses and CIDRs, and nothing beside them', () => {
    const allow = parseAllowlist(['127.0.0.1', '10.1.0.0/16', '[::1]']);
    expect(addressBlockReason('127.0.0.1', allow)).toBeNull();
    expect(addressBlockReason('127.0.0.2', allow)).toBe('loopback');
    expect(addressBlockReason('10.1.200.3', allow)).toBeNull();
    expect(addressBlockReason('10.2.0.1', allow)).toBe('private');
    expect(addressBlockReason('::1', allow)).toBeNull();
    expect(addressBlockReason('::ffff:127.0.0.1', allow)).toBeNull();
  });

  test('host names in the allowlist are kept apart from addresses', () => {
    const allow = parseAllowlist(['Media.Example.', '']);
    expect(allow.hosts.has('media.example')).toBe(true);
    expect(allow.ranges).toHaveLength(0);
  });
});
