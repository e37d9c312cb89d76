import { TooManyRedirectsError } from "../../activitypub/network/errors.ts";
import { fetchRemote } from "../../activitypub/network/outgoing-http.ts";
import { messageOf } from "../../activitypub/json-values.ts";

/**
 * Options for {@link probeHost}.
 * @since 0.2.0
 */
export interface ProbeHostOptions {
  /** The `User-Agent` header. */
  readonly userAgent: string;
  /** Whether loopback and private addresses may be contacted. */
  readonly allowPrivateAddress: boolean;
  /** How long to wait for an answer, in milliseconds. */
  readonly timeoutMs: number;
}

/**
 * Asks a host whether it is back: GETs its `/.well-known/nodeinfo` and
 * counts any answer but a 5xx, 408 or 429 as up (a 404 still proves the
 * server answers).
 * @param origin The host's origin, e.g. `https://mastodon.example`.
 * @param options The user agent, address policy and timeout.
 * @returns `{ up: true }`, or `{ up: false, reason }`.
 * @since 0.2.0
 */
export async function probeHost(
  origin: string,
  options: ProbeHostOptions,
): Promise<{ readonly up: true } | { readonly up: false; readonly reason: string }> {
  const url = new URL("/.well-known/nodeinfo", origin);
  try {
    const response = await fetchRemote(url, {
      headers: { Accept: "application/json" },
      userAgent: options.userAgent,
      allowPrivateAddress: options.allowPrivateAddress,
      timeout: { milliseconds: options.timeoutMs },
      // Any answer proves the server is up; its body does not matter.
      maxBodyBytes: 0,
      oversizedBody: "truncate",
      maxRedirects: 0,
      redirect: "error",
    });
    if (isHostFailureStatus(response.status)) {
      return { up: false, reason: `HTTP ${response.status}` };
    }
    return { up: true };
  } catch (error) {
    // A redirect is an answer too.
    if (error instanceof TooManyRedirectsError) return { up: true };
    return { up: false, reason: messageOf(error) };
  }
}

/**
 * Whether a status says the host itself is in trouble (5xx, 408, 429), as
 * opposed to refusing one request (other 4xx).
 * @param status The HTTP status.
 * @returns `true` for a host failure.
 * @since 0.2.0
 */
export function isHostFailureStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}
