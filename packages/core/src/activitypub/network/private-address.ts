import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { PrivateAddressError } from "./errors.ts";

/**
 * Tells whether an IP address is not publicly routable: loopback, private
 * (RFC 1918, unique local), link-local, carrier-grade NAT, unspecified,
 * multicast or reserved.
 * @param address An IPv4 or IPv6 address.
 * @returns `true` when the address is not public.
 * @since 0.1.0
 */
export function isNonPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return isNonPublicIPv4(address);
  if (version === 6) return isNonPublicIPv6(address);
  return true;
}

function isNonPublicIPv4(address: string): boolean {
  const [a, b] = address.split(".").map(Number);
  return a === 0 || a === 10 || a === 127 || a >= 224 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) ||
    (a === 198 && (b === 18 || b === 19));
}

function isNonPublicIPv6(address: string): boolean {
  const lower = address.toLowerCase();
  // IPv4-mapped addresses (::ffff:10.0.0.1) are judged by their IPv4 part.
  const mapped = /^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped != null) return isNonPublicIPv4(mapped[1]);
  if (lower === "::" || lower === "::1") return true;
  const first = parseInt(lower.split(":")[0] || "0", 16);
  return (first & 0xfe00) === 0xfc00 || // fc00::/7 unique local
    (first & 0xffc0) === 0xfe80 || // fe80::/10 link-local
    (first & 0xff00) === 0xff00; // ff00::/8 multicast
}

/**
 * Throws unless the URL's host resolves only to public addresses.
 * @param url The URL about to be contacted.
 * @throws {PrivateAddressError} When the host is or resolves to a
 *         non-public address.
 * @throws {TypeError} When the URL is not http(s).
 * @since 0.1.0
 */
export async function assertPublicUrl(url: URL): Promise<void> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`Only http(s) URLs can be contacted; got ${url.href}.`);
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (hostname === "localhost" || hostname.endsWith(".localhost")) {
    throw new PrivateAddressError(url.href, hostname);
  }
  if (isIP(hostname) !== 0) {
    if (isNonPublicAddress(hostname)) throw new PrivateAddressError(url.href, hostname);
    return;
  }
  const addresses = await lookup(hostname, { all: true });
  for (const { address } of addresses) {
    // A host with one private address could be pointed at it at any time.
    if (isNonPublicAddress(address)) throw new PrivateAddressError(url.href, address);
  }
}
