// Which addresses reelay may connect to. Only globally routable unicast is allowed: ipaddr.js names
// the special-purpose ranges of IANA's registries (private, loopback, link-local incl.
// 169.254.169.254, CGNAT, multicast, reserved, unspecified, ULA, IPv4-mapped, 6to4/Teredo/NAT64 which
// embed IPv4 addresses...) and we refuse all of them, the few that IANA marks global too (AS112, AMT,
// ORCHIDv2: nothing serves media there). ipaddr.js calls everything else "unicast", including IPv6
// outside 2000::/3 such as the deprecated IPv4-compatible ::/96 (::a9fe:a9fe is 169.254.169.254), so
// IPv6 must also lie in 2000::/3, the only block IANA allocates for global unicast.
// EGRESS_ALLOWLIST (hosts, IPs or CIDRs) is the single exception.
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface Allowlist {
  hosts: Set<string>;
  ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

export function parseAllowlist(entries: readonly string[]): Allowlist {
  const allow: Allowlist = { hosts: new Set(), ranges: [] };
  for (const raw of entries) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[(.*)\]$/, '$1');
    if (!entry) continue;
    if (entry.includes('/')) {
      allow.ranges.push(ipaddr.parseCIDR(entry));
    } else if (ipaddr.isValid(entry)) {
      const addr = ipaddr.parse(entry);
      allow.ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else {
      allow.hosts.add(entry.replace(/\.$/, ''));
    }
  }
  return allow;
}

export function isHostAllowlisted(hostname: string, allow: Allowlist): boolean {
  return allow.hosts.has(normaliseHost(hostname));
}

/**
 * Whether a host as written (a name or an IP literal) is on the allowlist itself, not merely
 * resolvable to an allowed address: for rules stricter than the address check (tunnel ports).
 */
export function isListedHost(host: string, allow: Allowlist): boolean {
  const name = normaliseHost(host);
  if (allow.hosts.has(name)) return true;
  return net.isIP(name) !== 0 && inAllowlist(ipaddr.parse(name), allow);
}

function inAllowlist(addr: ipaddr.IPv4 | ipaddr.IPv6, allow: Allowlist): boolean {
  return allow.ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits));
}

/**
 * Returns why an address may not be contacted, or null when it may. `address` must be a literal IP
 * as DNS or URL parsing produced it (dotted decimal or IPv6); anything else is refused.
 */
export function addressBlockReason(address: string, allow: Allowlist): string | null {
  const literal = address.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(literal) === 0) return 'not an IP address';
  const addr = ipaddr.parse(literal);
  if (inAllowlist(addr, allow)) return null;
  // An IPv4-mapped IPv6 address is also checked as the IPv4 it names, so an allow-listed IPv4 in
  // mapped form passes, but it is refused otherwise: mapped forms are a classic way round filters.
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    const v4 = (addr as ipaddr.IPv6).toIPv4Address();
    if (inAllowlist(v4, allow)) return null;
    return 'ipv4Mapped';
  }
  const range = addr.range();
  if (range !== 'unicast') return range;
  if (addr.kind() === 'ipv6' && !addr.match(GLOBAL_UNICAST_V6)) {
    const parts = (addr as ipaddr.IPv6).parts;
    return parts.slice(0, 6).every((part) => part === 0) ? 'ipv4Compatible' : 'notGlobalUnicast';
  }
  return null;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Lower-cases, strips IPv6 brackets and a trailing dot. */
export function normaliseHost(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}
