/**
 * Which IP addresses can point at a person. An address is personal data when the internet can reach it, so that its
 * provider can tell whose connection it was. Addresses of the IANA special-purpose registries that are not globally
 * reachable (loopback, unspecified, documentation, private, shared, link-local, benchmarking, multicast, reserved;
 * netmasks fall in the last) are not, nor are the anycast addresses of the public DNS resolvers.
 */

/** [network, prefix length] pairs of IPv4. */
const IPV4_NOT_PERSONAL: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 is the unspecified address
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast and netmasks
];

/** Public DNS resolvers: addresses of a service, written in every network guide. */
const IPV4_RESOLVERS = ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4', '9.9.9.9', '149.112.112.112', '208.67.222.222', '208.67.220.220'];

function ipv4Number(address: string): number {
  const parts = address.split('.');
  return (((Number(parts[0]) << 24) >>> 0) + (Number(parts[1]) << 16) + (Number(parts[2]) << 8) + Number(parts[3])) >>> 0;
}

const IPV4_RANGES = IPV4_NOT_PERSONAL.map(([network, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { network: (ipv4Number(network) & mask) >>> 0, mask };
});
const IPV4_RESOLVER_SET = new Set(IPV4_RESOLVERS.map(ipv4Number));

/**
 * A dotted quad (already validated) that can point at a person. One that ends in .0 or .255 is the network or broadcast
 * address of a /24, as written in routing and firewall rules, not a host's.
 */
export function isPersonalIpv4(address: string): boolean {
  const n = ipv4Number(address);
  return (n & 0xff) !== 0 && (n & 0xff) !== 0xff && isPersonalIpv4Number(n);
}

function isPersonalIpv4Number(n: number): boolean {
  for (const r of IPV4_RANGES) if (((n & r.mask) >>> 0) === r.network) return false;
  return !IPV4_RESOLVER_SET.has(n);
}

/** The eight 16-bit groups of an IPv6 address (already validated), an IPv4 tail as two groups. */
export function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (g.includes('.')) {
        const n = ipv4Number(g);
        out.push(n >>> 16, n & 0xffff);
      } else {
        out.push(parseInt(g, 16));
      }
    }
    return out;
  };
  const halves = address.split('::');
  const head = parse(halves[0]);
  if (halves.length === 1) return head;
  const tail = parse(halves[1]);
  return [...head, ...new Array<number>(Math.max(0, 8 - head.length - tail.length)).fill(0), ...tail];
}

/** [groups of the prefix, prefix length] pairs of IPv6; `::ffff:0:0/96` and `64:ff9b::/96` are read by their IPv4 tail. */
const IPV6_NOT_PERSONAL: ReadonlyArray<readonly [string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];
const IPV6_RESOLVERS = ['2606:4700:4700::1111', '2606:4700:4700::1001', '2001:4860:4860::8888', '2001:4860:4860::8844', '2620:fe::fe', '2620:fe::9'];

const IPV6_RANGES = IPV6_NOT_PERSONAL.map(([prefix, bits]) => ({ groups: ipv6Groups(prefix), bits }));
const IPV6_RESOLVER_KEYS = new Set(IPV6_RESOLVERS.map((a) => ipv6Groups(a).join(':')));

function inPrefix(groups: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
}

/** An IPv6 address (already validated) that can point at a person. */
export function isPersonalIpv6(address: string): boolean {
  const g = ipv6Groups(address.toLowerCase());
  if (g.length !== 8) return true;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::) addresses are as personal as the
  // IPv4 address they carry.
  if ((zeros(0, 5) && g[5] === 0xffff) || (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6))) {
    return isPersonalIpv4Number(((g[6] << 16) >>> 0) + g[7]);
  }
  if (g[0] === 0x2002) return isPersonalIpv4Number(((g[1] << 16) >>> 0) + g[2]);
  for (const r of IPV6_RANGES) if (inPrefix(g, r.groups, r.bits)) return false;
  return !IPV6_RESOLVER_KEYS.has(g.join(':'));
}

/** Every bit of the address past the first `prefix` is zero: a network written in CIDR notation. */
export function ipv4HostBitsZero(address: string, prefix: number): boolean {
  if (prefix >= 32) return false;
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return ((ipv4Number(address) & ~mask) >>> 0) === 0;
}

export function ipv6HostBitsZero(address: string, prefix: number): boolean {
  if (prefix >= 128) return false;
  const g = ipv6Groups(address.toLowerCase());
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, prefix - i * 16));
    const hostMask = keep >= 16 ? 0 : 0xffff >> keep;
    if ((g[i] & hostMask) !== 0) return false;
  }
  return true;
}
