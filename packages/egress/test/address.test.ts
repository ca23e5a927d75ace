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
