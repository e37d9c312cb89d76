// Who may read the health endpoints: a bearer of the token, or a loopback
// client that no proxy forwarded.  Forwarded headers can only refuse: a
// client can forge them, but a proxy adds them, so their presence on a
// loopback connection says "someone else, through the proxy".

/**
 * The headers a reverse proxy adds to say whom it forwards for; a loopback
 * request carrying any of them is not a local one.
 */
const FORWARDED_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"] as const;

/**
 * Whether an address is a loopback one: `127.0.0.0/8`, `::1`, or either
 * written as an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`).
 * @param address The address, as the server reports the client's.
 * @returns Whether it is loopback.
 * @since 0.4.0
 */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const lower = bare.toLowerCase();
  if (lower === "::1" || lower === "0:0:0:0:0:0:0:1") return true;
  const v4 = lower.startsWith("::ffff:") ? lower.slice("::ffff:".length) : lower;
  const parts = v4.split(".");
  return parts.length === 4 && parts[0] === "127" &&
    parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255);
}

/** Why a request was refused, or `null` when it may ask. */
export type HealthAccessDecision = { readonly allowed: true } | {
  readonly allowed: false;
  readonly reason: string;
};

/**
 * Decides whether a request may read the health endpoints.  Internal.
 * @param request The request.
 * @param remoteAddress The client's address, as the server saw the connection.
 * @param access The token and whether loopback clients may ask.
 * @returns The decision.
 * @since 0.4.0
 */
export async function decideHealthAccess(
  request: Request,
  remoteAddress: string | undefined,
  access: { readonly token: string | undefined; readonly allowLoopback: boolean },
): Promise<HealthAccessDecision> {
  const authorization = request.headers.get("authorization");
  if (access.token !== undefined && authorization != null) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match != null && await sameSecret(match[1], access.token)) return { allowed: true };
    return { allowed: false, reason: "The bearer token is not the right one." };
  }
  if (!access.allowLoopback) {
    return { allowed: false, reason: "The health endpoints need a bearer token." };
  }
  if (remoteAddress === undefined) {
    return {
      allowed: false,
      reason: "The server did not pass the client's address, so it cannot be told local.",
    };
  }
  if (!isLoopbackAddress(remoteAddress)) {
    return { allowed: false, reason: "The health endpoints answer only loopback clients." };
  }
  const forwarded = FORWARDED_HEADERS.find((name) => request.headers.has(name));
  if (forwarded !== undefined) {
    return {
      allowed: false,
      reason: `The request was forwarded by a proxy (it has ${forwarded}), so it is not local.`,
    };
  }
  return { allowed: true };
}

/**
 * Compares two secrets in time that does not depend on where they differ:
 * their SHA-256 digests, always 32 bytes, byte by byte.
 */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  const x = new Uint8Array(a), y = new Uint8Array(b);
  let difference = 0;
  for (let i = 0; i < x.length; i++) difference |= x[i] ^ y[i];
  return difference === 0;
}
