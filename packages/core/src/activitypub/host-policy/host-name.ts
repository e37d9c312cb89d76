// One spelling per host, so that a block list entry matches however a URL
// writes the host: case, Unicode or punycode, a trailing dot, a port.

/**
 * Normalises a host name: lower case, IDNA (punycode), without a trailing
 * dot or a port; IPv6 addresses keep their brackets.  Internal.
 * @param host A host name, with or without a port (`Example.COM.:443`).
 * @returns The normalised name, or `undefined` when it is no host name
 *          (empty, or with a scheme, a path, a query or a user).
 * @since 0.4.0
 */
export function normalizeHostName(host: string): string | undefined {
  if (host === "" || /[/?#@\\\s]/.test(host)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
  while (hostname.endsWith(".")) hostname = hostname.slice(0, -1);
  return hostname === "" ? undefined : hostname;
}

/**
 * The normalised host name of a URL.  Internal.
 * @param url The URL.
 * @returns Its host name, as {@link normalizeHostName} spells it.
 * @since 0.4.0
 */
export function hostNameOf(url: URL): string {
  return normalizeHostName(url.host) ?? url.hostname;
}
