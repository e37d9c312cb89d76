import { PrivateAddressError } from "./errors.ts";

// The parser below is written by hand on purpose.  The guard must read an
// address exactly as the socket layer will, in every spelling an attacker
// can choose (IPv4 as one integer, in octal or hex, shortened; IPv6 with
// `::`, a dotted IPv4 tail, a zone id, brackets, upper case), and it must
// behave the same under Deno, Node.js and Bun.  `node:net`'s isIP() knows
// none of the IPv4 shorthands and tells nothing about what an IPv6 address
// embeds; `ipaddr.js` covers most forms but is one more dependency in two
// manifests for about a hundred lines that are easy to test exhaustively.

/** IPv4 as an unsigned 32-bit number, IPv6 as eight 16-bit groups. */
type ParsedAddress =
  | { readonly family: 4; readonly value: number }
  | { readonly family: 6; readonly groups: readonly number[] };

/**
 * Reads an IPv4 address the way the WHATWG URL parser does: one to four
 * dot-separated parts, each decimal, `0x` hexadecimal or `0` octal, the
 * last filling the bytes that remain (`127.1`, `0x7f000001`, `2130706433`).
 */
function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = parseInt(part.slice(1), 8);
    else if (/^(?:0|[1-9][0-9]*)$/.test(part)) value = parseInt(part, 10);
    else return null;
    numbers.push(value);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - numbers.length)) return null;
  return numbers.reduce((sum, n, i) => sum + n * 256 ** (3 - i), last);
}

/**
 * Reads the strict dotted-quad IPv4 that may end an IPv6 address: exactly
 * four decimal parts without leading zeros, as RFC 4291 and the WHATWG
 * IPv6 parser require (`010` would be ambiguous between octal and decimal).
 */
function parseDottedQuad(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

/** Reads an IPv6 address (no brackets, no zone id) into eight 16-bit groups. */
function parseIPv6(text: string): number[] | null {
  const lastColon = text.lastIndexOf(":");
  if (lastColon < 0) return null;
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseDottedQuad(tail);
    if (v4 == null) return null;
    // The dotted tail is the last two groups written another way.
    const high = (v4 >>> 16).toString(16);
    const low = (v4 & 0xffff).toString(16);
    text = `${text.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const readGroups = (s: string) =>
    s === ""
      ? []
      : s.split(":").map((group) => /^[0-9a-f]{1,4}$/i.test(group) ? parseInt(group, 16) : NaN);
  const head = readGroups(halves[0]);
  if (halves.length === 1) return head.length === 8 && !head.some(isNaN) ? head : null;
  const rest = readGroups(halves[1]);
  // `::` stands for at least one zero group (RFC 4291, inet_pton).
  const missing = 8 - head.length - rest.length;
  if (missing < 1 || head.some(isNaN) || rest.some(isNaN)) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...rest];
}

function parseAddress(address: string): ParsedAddress | null {
  const bracketed = /^\[(.*)\]$/.exec(address);
  let text = bracketed == null ? address : bracketed[1];
  if (bracketed != null || text.includes(":")) {
    // A zone id (`fe80::1%eth0`, or `%25eth0` as URLs escape it) only picks
    // the interface; the address is what precedes it.
    const zone = text.indexOf("%");
    if (zone >= 0) {
      if (zone === text.length - 1) return null;
      text = text.slice(0, zone);
    }
    const groups = parseIPv6(text);
    return groups == null ? null : { family: 6, groups };
  }
  const value = parseIPv4(text);
  return value == null ? null : { family: 4, value };
}

function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join(".");
}

/** Formats IPv6 as RFC 5952 recommends: lower case, the longest zero run compressed. */
function formatIPv6(groups: readonly number[]): string {
  if (inPrefix(groups, IPV4_MAPPED)) return `::ffff:${formatIPv4(embeddedIPv4(groups, 6))}`;
  let bestStart = -1;
  let bestLength = 1; // A lone zero group is not compressed.
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(":");
  const before = hex.slice(0, bestStart).join(":");
  const after = hex.slice(bestStart + bestLength).join(":");
  return `${before}::${after}`;
}

function embeddedIPv4(groups: readonly number[], index: number): number {
  return groups[index] * 0x10000 + groups[index + 1];
}

interface IPv6Prefix {
  readonly groups: readonly number[];
  readonly bits: number;
}

function ipv6Prefix(address: string, bits: number): IPv6Prefix {
  return { groups: parseIPv6(address)!, bits };
}

function inPrefix(groups: readonly number[], prefix: IPv6Prefix): boolean {
  for (let i = 0, bits = prefix.bits; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i] & mask) !== (prefix.groups[i] & mask)) return false;
  }
  return true;
}

// IANA's IPv4 Special-Purpose Address Registry, less the blocks that are
// globally reachable, plus multicast and the reserved 240/4.
const NON_PUBLIC_IPV4: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // RFC 1918 private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12], // RFC 1918 private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation (TEST-NET-1)
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // RFC 1918 private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation (TEST-NET-2)
  ["203.0.113.0", 24], // documentation (TEST-NET-3)
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, including broadcast 255.255.255.255
];
const NON_PUBLIC_IPV4_RANGES = NON_PUBLIC_IPV4.map(([base, bits]) => ({
  base: parseIPv4(base)!,
  mask: (0xffffffff << (32 - bits)) >>> 0,
}));

function isNonPublicIPv4(value: number): boolean {
  return NON_PUBLIC_IPV4_RANGES.some(({ base, mask }) => ((value & mask) >>> 0) === base);
}

// IPv6 ranges that carry an IPv4 address the traffic really goes to; the
// address is judged by that IPv4, so a NAT64 gateway or 6to4 router cannot
// be used to reach 127.0.0.1 or 169.254.169.254, while DNS64-synthesised
// addresses of public hosts keep working on IPv6-only networks.
const IPV4_MAPPED = ipv6Prefix("::ffff:0:0", 96); // IPv4 in the last 32 bits
const NAT64 = ipv6Prefix("64:ff9b::", 96); // well-known prefix, IPv4 in the last 32 bits
const SIX_TO_FOUR = ipv6Prefix("2002::", 16); // IPv4 in groups 1 and 2

const NON_PUBLIC_IPV6: readonly IPv6Prefix[] = [
  ipv6Prefix("::", 128), // unspecified
  ipv6Prefix("::1", 128), // loopback
  // IPv4-compatible (deprecated by RFC 4291) and IPv4-translated (SIIT)
  // addresses: never a public peer's address, and some stacks route them to
  // the embedded IPv4, so the whole ranges are refused whatever they embed.
  ipv6Prefix("::", 96),
  ipv6Prefix("::ffff:0:0:0", 96),
  // Local-use NAT64 (RFC 8215): where the IPv4 sits depends on the prefix
  // length a network chose, so it cannot be read; the range is local anyway.
  ipv6Prefix("64:ff9b:1::", 48),
  ipv6Prefix("100::", 64), // discard-only
  // IETF protocol assignments, including Teredo (2001::/32, whose client
  // IPv4 is hidden and any relay may deliver it), benchmarking
  // (2001:2::/48) and ORCHID.
  ipv6Prefix("2001::", 23),
  ipv6Prefix("2001:db8::", 32), // documentation
  ipv6Prefix("3fff::", 20), // documentation
  ipv6Prefix("5f00::", 16), // SRv6 segment identifiers
  ipv6Prefix("fc00::", 7), // unique local
  ipv6Prefix("fe80::", 10), // link-local
  ipv6Prefix("fec0::", 10), // site-local (deprecated)
  ipv6Prefix("ff00::", 8), // multicast
];

// Every public unicast IPv6 address IANA has allocated lies in 2000::/3;
// the rest of the space is reserved, so it is refused rather than trusted.
const GLOBAL_UNICAST = ipv6Prefix("2000::", 3);

function isNonPublicIPv6(groups: readonly number[]): boolean {
  if (inPrefix(groups, IPV4_MAPPED) || inPrefix(groups, NAT64)) {
    return isNonPublicIPv4(embeddedIPv4(groups, 6));
  }
  if (inPrefix(groups, SIX_TO_FOUR)) return isNonPublicIPv4(embeddedIPv4(groups, 1));
  return NON_PUBLIC_IPV6.some((prefix) => inPrefix(groups, prefix)) ||
    !inPrefix(groups, GLOBAL_UNICAST);
}

/**
 * Tells whether an IP address is not publicly routable: loopback, private
 * (RFC 1918, unique local), link-local, carrier-grade NAT, unspecified,
 * multicast, documentation, benchmarking or reserved.  Every spelling is
 * read: IPv4 as an integer, in octal or hex or shortened (`0x7f.1`), IPv6
 * in brackets, with a zone id or in upper case, and IPv6 forms that embed
 * an IPv4 address (IPv4-mapped `::ffff:7f00:1`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) are judged by the IPv4 address they embed.
 * @param address An IPv4 or IPv6 address.
 * @returns `true` when the address is not public, or is not an IP address
 *          at all.
 * @example
 * ```ts
 * isNonPublicAddress("::ffff:a9fe:a9fe"); // true: 169.254.169.254
 * isNonPublicAddress("2130706433"); // true: 127.0.0.1
 * isNonPublicAddress("2606:4700::1111"); // false
 * ```
 * @since 0.1.0
 */
export function isNonPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  return parsed == null || isNonPublic(parsed);
}

function isNonPublic(parsed: ParsedAddress): boolean {
  return parsed.family === 4 ? isNonPublicIPv4(parsed.value) : isNonPublicIPv6(parsed.groups);
}

function formatAddress(parsed: ParsedAddress): string {
  return parsed.family === 4 ? formatIPv4(parsed.value) : formatIPv6(parsed.groups);
}

/**
 * Writes an IP address in its canonical form: dotted-quad IPv4, or IPv6 as
 * RFC 5952 recommends (lower case, longest zero run compressed, IPv4-mapped
 * addresses with a dotted tail), without brackets or zone id.
 * @param address An IPv4 or IPv6 address in any spelling the guard reads
 *                (`0x7f.1`, `[::FFFF:7F00:1]`, `fe80::1%eth0`).
 * @returns The canonical form, or `null` when it is not an IP address.
 * @since 0.3.0
 */
export function normalizeIpAddress(address: string): string | null {
  const parsed = parseAddress(address);
  return parsed == null ? null : formatAddress(parsed);
}

/** How long a host name may take to resolve before the request is given up. */
const DNS_LOOKUP_TIMEOUT_MS = 5_000;

type LookupAll = (
  hostname: string,
  options: { all: true },
) => Promise<{ address: string; family: number }[]>;

let resolver: Promise<LookupAll | null> | undefined;

/**
 * `node:dns`'s `lookup()`, imported on first use rather than when the
 * module loads, so that Fedwork loads on runtimes without `node:dns`;
 * `null` there.
 */
function loadResolver(): Promise<LookupAll | null> {
  resolver ??= import("node:dns/promises").then(
    (dns) => dns.lookup as LookupAll,
    () => null,
  );
  return resolver;
}

/**
 * Whether this is Cloudflare Workers (workerd), whose `fetch()` resolves
 * names itself and refuses private and internal addresses: there the
 * guard checks IP literals and `localhost` but leaves names to the
 * platform.
 * @internal
 * @since 0.3.0
 */
export function isCloudflareWorkers(): boolean {
  const navigator = (globalThis as { navigator?: { userAgent?: string } }).navigator;
  return navigator?.userAgent === "Cloudflare-Workers";
}

async function lookupAll(hostname: string): Promise<{ address: string; family: number }[]> {
  const lookup = await loadResolver();
  if (lookup == null) {
    throw new Error(
      `Cannot check the addresses of ${hostname}: this runtime has no DNS resolver ` +
        "(node:dns), so the address guard cannot tell whether the host is public.",
    );
  }
  const pending = lookup(hostname, { all: true });
  // getaddrinfo() cannot be cancelled; a late failure must not go unhandled.
  pending.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new Error(
          `Resolving the host ${hostname} took more than ${DNS_LOOKUP_TIMEOUT_MS / 1000} ` +
            "seconds; giving up.  Check the host name and the DNS resolver.",
        ),
      );
    }, DNS_LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether a host name is `localhost` or under `.localhost` (RFC 6761: it
 * always means this machine), in any case and with trailing dots.
 * @param hostname A host name.
 * @returns `true` for a localhost name.
 * @since 0.3.0
 */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

async function resolveOrRefuse(
  hostname: string,
  subject: string,
): Promise<{ address: string; family: 4 | 6 }[]> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  if (isLocalhostName(host)) {
    throw new PrivateAddressError(subject, host);
  }
  // An IP literal is judged as written, never handed to the resolver:
  // getaddrinfo() would read `0x7f.1` as 127.0.0.1 too, but only after the
  // guard had looked away.
  const literal = parseAddress(host);
  if (literal != null) {
    const address = formatAddress(literal);
    if (isNonPublic(literal)) throw new PrivateAddressError(subject, address);
    return [{ address, family: literal.family }];
  }
  // The platform's own fetch() refuses private addresses there.
  if (isCloudflareWorkers()) return [];
  const resolved = await lookupAll(host);
  if (resolved.length < 1) throw new Error(`The host ${host} resolved to no address.`);
  const result: { address: string; family: 4 | 6 }[] = [];
  for (const { address } of resolved) {
    // A host with one private address could be pointed at it at any time.
    const parsed = parseAddress(address);
    if (parsed == null || isNonPublic(parsed)) {
      throw new PrivateAddressError(subject, address);
    }
    result.push({ address, family: parsed.family });
  }
  return result;
}

/**
 * Resolves a host name to its addresses and makes sure every one of them is
 * public.  An IP literal (brackets allowed, any spelling
 * {@link isNonPublicAddress} reads) is not looked up but judged and returned
 * in canonical form.  Use it as the DNS lookup of a connection, so that the
 * address checked is the address connected to.
 * @param hostname A host name or IP literal, as in `URL.hostname`.
 * @returns The addresses, in the resolver's order; on Cloudflare Workers,
 *          where the platform's `fetch()` refuses private addresses itself
 *          and there is no resolver, an empty list for a name (literals and
 *          `localhost` are still judged).
 * @throws {PrivateAddressError} When the host is `localhost` or under
 *         `.localhost`, or any of its addresses is non-public; its `url` is
 *         the host name.
 * @throws {Error} When resolving takes more than 5 seconds, or fails.
 * @example
 * ```ts
 * const [{ address, family }] = await resolvePublicAddresses("example.com");
 * ```
 * @since 0.3.0
 */
export function resolvePublicAddresses(
  hostname: string,
): Promise<{ address: string; family: 4 | 6 }[]> {
  return resolveOrRefuse(hostname, hostname);
}

/**
 * Throws unless the URL's host resolves only to public addresses.  On
 * Cloudflare Workers it checks IP literals and `localhost` only and leaves
 * names to the platform, whose `fetch()` refuses private addresses.
 * @param url The URL about to be contacted.
 * @throws {PrivateAddressError} When the host is or resolves to a
 *         non-public address.
 * @throws {TypeError} When the URL is not http(s).
 * @throws {Error} When resolving the host takes more than 5 seconds, or
 *         fails.
 * @since 0.1.0
 */
export async function assertPublicUrl(url: URL): Promise<void> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`Only http(s) URLs can be contacted; got ${url.href}.`);
  }
  await resolveOrRefuse(url.hostname, url.href);
}
