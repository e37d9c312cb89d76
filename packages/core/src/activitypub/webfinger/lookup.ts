import { getLogger } from "@logtape/logtape";
import type { DurationInput } from "../../time/duration.ts";
import { PrivateAddressError } from "../network/errors.ts";
import { fetchRemote, type RemoteResponse } from "../network/outgoing-http.ts";
import { isNonPublicAddress, normalizeIpAddress } from "../network/private-address.ts";
import type { WebFingerLink } from "./handler.ts";
import { messageOf } from "../json-values.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { DEFAULT_USER_AGENT } from "../../http/user-agent.ts";

const logger = getLogger(["fedwork", "activitypub", "webfinger"]);

/**
 * A JSON Resource Descriptor (RFC 7033 §4.4), as a WebFinger server
 * answers.
 * @since 0.2.0
 */
export interface ResourceDescriptor {
  readonly subject?: string;
  readonly aliases?: readonly string[];
  readonly links?: readonly WebFingerLink[];
}

/**
 * Options for {@link lookupWebFinger}.
 * @since 0.2.0
 */
export interface LookupWebFingerOptions {
  /**
   * The time limit of the lookup.
   * @default 10 seconds
   * @since 0.3.0
   */
  readonly timeout?: DurationInput;
  /**
   * The largest descriptor read, in bytes.
   * @default 1 MiB
   * @since 0.3.0
   */
  readonly maxBodyBytes?: number;
  /**
   * How many redirects are followed (a handle's host often redirects its
   * WebFinger endpoint to the server's web host); each hop's address is
   * checked.  Fedify's `maxRedirection`.
   * @default `5`
   * @since 0.3.0
   */
  readonly maxRedirects?: number;
  /**
   * The `User-Agent` header.  Optional since 0.3.0, as in Fedify.
   * @default `"Fedwork/<version>"`
   */
  readonly userAgent?: string;
  /**
   * Whether loopback and private hosts may be asked; they are then asked
   * over plain HTTP (a test or development server has no certificate).
   * Optional since 0.3.0, as in Fedify.
   * @default `false`
   */
  readonly allowPrivateAddress?: boolean;
  /** Aborts the request. */
  readonly signal?: AbortSignal;
}

const LOOKUP_WEBFINGER_OPTIONS: readonly (keyof LookupWebFingerOptions)[] = [
  "timeout",
  "maxBodyBytes",
  "maxRedirects",
  "userAgent",
  "allowPrivateAddress",
  "signal",
];

/**
 * Parses a fediverse handle: `@user@host`, `user@host` or
 * `acct:user@host`.
 * @param handle The handle.
 * @returns The user and host, or `null` when it is not a handle.
 * @since 0.2.0
 */
export function parseFediverseHandle(handle: string): { user: string; host: string } | null {
  const match = /^(?:acct:|@)?([^@\s/:]+)@([^@\s/]+)$/i.exec(handle.trim());
  if (match == null) return null;
  return { user: match[1], host: match[2].toLowerCase() };
}

/**
 * Asks a host's WebFinger endpoint about a resource (RFC 7033): an
 * `acct:user@host` URI or an http(s) URL.  Over HTTPS, except for loopback
 * and private hosts when `allowPrivateAddress` is set.
 * @param resource The resource, e.g. `acct:alice@example.com`, or a URL.
 * @param options The user agent, address policy and limits.
 * @returns The descriptor, or `null` when the host has none (or fails).
 * @throws {PrivateAddressError} When the host is not public and
 *         `allowPrivateAddress` is `false`.
 * @throws {UnknownOptionError} When an option is not one it takes (since
 *         0.3.0), e.g. Fedify's `maxRedirection` (here `maxRedirects`).
 * @throws {TypeError} When `userAgent` is not a string.
 * @since 0.2.0
 * @example
 * ```ts
 * import { lookupWebFinger } from "@fedwork/core";
 *
 * const jrd = await lookupWebFinger("acct:alice@example.com", {
 *   userAgent: "MyApp/1.0",
 *   allowPrivateAddress: false,
 * });
 * const self = jrd?.links?.find((link) => link.rel === "self");
 * ```
 */
export async function lookupWebFinger(
  resource: URL | string,
  options: LookupWebFingerOptions = {},
): Promise<ResourceDescriptor | null> {
  assertKnownOptions(options, LOOKUP_WEBFINGER_OPTIONS, { where: "lookupWebFinger()" });
  if (options.userAgent != null && typeof options.userAgent !== "string") {
    throw new TypeError("The userAgent option of lookupWebFinger() must be a string.");
  }
  if (resource instanceof URL) resource = resource.href;
  const allowPrivateAddress = options.allowPrivateAddress ?? false;
  let host: string;
  if (resource.startsWith("acct:")) {
    const handle = parseFediverseHandle(resource);
    if (handle == null) return null;
    host = handle.host;
  } else {
    host = new URL(resource).host;
  }
  const hostname = new URL(`http://${host}`).hostname.replace(/^\[|\]$/g, "");
  const plain = allowPrivateAddress &&
    (hostname === "localhost" ||
      (normalizeIpAddress(hostname) !== null && isNonPublicAddress(hostname)));
  const url = new URL(`${plain ? "http" : "https"}://${host}/.well-known/webfinger`);
  url.searchParams.set("resource", resource);
  let response: RemoteResponse;
  try {
    response = await fetchRemote(url, {
      headers: { Accept: "application/jrd+json, application/json" },
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      allowPrivateAddress,
      // Followed as Fedify and Mastodon do: a handle host commonly sends
      // its WebFinger endpoint on to the web host.  fetchRemote() checks
      // every hop's address.
      ...(options.maxRedirects == null ? {} : { maxRedirects: options.maxRedirects }),
      ...(options.timeout == null ? {} : { timeout: options.timeout }),
      ...(options.maxBodyBytes == null ? {} : { maxBodyBytes: options.maxBodyBytes }),
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof PrivateAddressError) throw error;
    logger.debug("WebFinger lookup of {resource} failed: {message}", {
      resource,
      message: messageOf(error),
    });
    return null;
  }
  if (!response.ok) {
    logger.debug("WebFinger lookup of {resource} answered {status}.", {
      resource,
      status: response.status,
    });
    return null;
  }
  try {
    const jrd = response.json();
    return typeof jrd === "object" && jrd != null ? jrd as ResourceDescriptor : null;
  } catch {
    return null;
  }
}
