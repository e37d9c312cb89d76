import type { DocumentLoader } from "@fedify/vocab";
import { FederationOptionError } from "./errors.ts";
import { DEFAULT_USER_AGENT } from "../http/user-agent.ts";

// The forms of the origin, userAgent and document loader options, Fedify's
// included, and how each becomes the one value Fedwork uses.

/**
 * The default `User-Agent` header of outgoing requests.
 * @since 0.1.0
 */
export { DEFAULT_USER_AGENT };

/**
 * The `origin` option in Fedify's object form.
 * @since 0.2.0
 */
export interface FederationOrigin {
  /**
   * The host of the actors' fediverse handles (`@alice@example.com`),
   * which may differ from `webOrigin`'s (Fedify's `@alice@example.com`
   * served from `ap.example.com`): WebFinger answers `acct:` handles on
   * this host with subjects on it, while actor ids stay on `webOrigin`.
   * Requests for `https://<handleHost>/.well-known/webfinger` must reach
   * the federation (a redirect or a proxy on that host).  Since 0.3.0; it
   * had to be `webOrigin`'s host before.
   */
  readonly handleHost: string;
  /** The canonical origin of the URIs a context builds, e.g. `https://example.com`. */
  readonly webOrigin: string | URL;
}

/**
 * The `userAgent` option in Fedify's object form: the header becomes
 * `<software> (Fedwork/<version>; +<url>)`.
 * @since 0.2.0
 */
export interface UserAgentOptions {
  /** The app's name and version, e.g. `"MyApp/1.0.0"`. */
  readonly software?: string | null;
  /** The app's URL, usually the instance's, appended with a `+`. */
  readonly url?: string | URL | null;
}

/**
 * What a {@link DocumentLoaderFactory} gets: the federation's resolved
 * `allowPrivateAddress` and `userAgent`.  The same shape as Fedify's.
 * @since 0.2.0
 */
export interface DocumentLoaderFactoryOptions {
  /** Whether loopback and private addresses may be fetched. */
  readonly allowPrivateAddress?: boolean;
  /** The `User-Agent` header to send. */
  readonly userAgent?: string | UserAgentOptions;
}

/**
 * Makes the federation's document loader, as Fedify's
 * `documentLoaderFactory` option does; Fedify's factories (for example its
 * `getDocumentLoader`) fit.
 * @since 0.2.0
 */
export type DocumentLoaderFactory = (options?: DocumentLoaderFactoryOptions) => DocumentLoader;

/**
 * Resolves the `origin` option, a URL or Fedify's `{ handleHost, webOrigin }`,
 * to an origin string such as `https://example.com`.  Internal.
 * @throws {FederationOptionError} When it is not a bare http(s) URL, or
 *         `handleHost` is not a host name.
 */
export function resolveOrigin(
  origin: string | URL | FederationOrigin | undefined,
): string | undefined {
  if (origin == null) return undefined;
  if (typeof origin === "object" && !(origin instanceof URL)) {
    return resolveFedifyOrigin(origin);
  }
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new FederationOptionError(
      "origin",
      `The origin option must be an http(s) URL such as "https://example.com"; got ${
        JSON.stringify(String(origin))
      }.`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FederationOptionError(
      "origin",
      `The origin option must be an http(s) URL; got the ${url.protocol} scheme.`,
    );
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    throw new FederationOptionError(
      "origin",
      `The origin option must be an http(s) URL without a path, query or fragment; got ${url.href}.`,
    );
  }
  return url.origin;
}

/** Fedify's `{ handleHost, webOrigin }`: the web origin, checked. */
function resolveFedifyOrigin(origin: FederationOrigin): string {
  const { handleHost, webOrigin } = origin;
  if (webOrigin == null || typeof handleHost !== "string") {
    throw new FederationOptionError(
      "origin",
      "The origin option must be a URL or an object { handleHost, webOrigin } as in Fedify.",
    );
  }
  let resolved: string;
  try {
    resolved = resolveOrigin(webOrigin)!;
  } catch (error) {
    if (!(error instanceof FederationOptionError)) throw error;
    throw new FederationOptionError(
      "origin.webOrigin",
      error.message.replace("origin", "origin.webOrigin"),
    );
  }
  resolveHandleHost(origin);
  return resolved;
}

/**
 * Resolves the host of fediverse handles from the `origin` option: Fedify's
 * `handleHost`, lower-cased, when the object form is given.  Internal.
 * @returns The handle host, or `undefined` when handles are on the web
 *          host (a URL origin, or none).
 * @throws {FederationOptionError} When `handleHost` is not a host name
 *         (with an optional port).
 * @since 0.3.0
 */
export function resolveHandleHost(
  origin: string | URL | FederationOrigin | undefined,
): string | undefined {
  if (origin == null || typeof origin !== "object" || origin instanceof URL) return undefined;
  const { handleHost } = origin;
  const host = typeof handleHost === "string" ? handleHost.trim().toLowerCase() : "";
  let parsed: URL | null = null;
  try {
    parsed = host === "" ? null : new URL(`https://${host}`);
  } catch {
    parsed = null;
  }
  if (parsed == null || parsed.host !== host || parsed.pathname !== "/") {
    throw new FederationOptionError(
      "origin.handleHost",
      `The origin.handleHost option must be a host name such as "example.com"; got ${
        JSON.stringify(handleHost)
      }.`,
    );
  }
  return host;
}

/**
 * Resolves the `userAgent` option: a string, or Fedify's `{ software, url }`
 * made into a header value.  Internal.
 * @throws {FederationOptionError} When it is empty or malformed.
 */
export function resolveUserAgent(userAgent: string | UserAgentOptions | undefined): string {
  if (userAgent == null) return DEFAULT_USER_AGENT;
  if (typeof userAgent === "string") {
    if (userAgent.trim() === "") {
      throw new FederationOptionError("userAgent", "The userAgent option must not be empty.");
    }
    return userAgent;
  }
  if (typeof userAgent !== "object") {
    throw new FederationOptionError(
      "userAgent",
      "The userAgent option must be a non-empty string or an object { software, url }.",
    );
  }
  const { software, url } = userAgent;
  if (software != null && (typeof software !== "string" || software.trim() === "")) {
    throw new FederationOptionError(
      "userAgent.software",
      'The userAgent.software option must be a non-empty string such as "MyApp/1.0.0".',
    );
  }
  let href: string | undefined;
  if (url != null) {
    try {
      href = new URL(url).href;
    } catch {
      throw new FederationOptionError(
        "userAgent.url",
        `The userAgent.url option must be a URL; got ${JSON.stringify(String(url))}.`,
      );
    }
  }
  // The same layout as Fedify's: the app first, then the framework and URL.
  const details = [
    ...(software == null ? [] : [DEFAULT_USER_AGENT]),
    ...(href == null ? [] : [`+${href}`]),
  ];
  const product = software ?? DEFAULT_USER_AGENT;
  return details.length === 0 ? product : `${product} (${details.join("; ")})`;
}

/**
 * Calls the `documentLoaderFactory` option, if given, with the resolved
 * address policy and user agent.  Internal.
 * @returns The loader it made, or `undefined` without a factory.
 * @throws {FederationOptionError} When both a loader and a factory are
 *         given, or the factory is not a function or returns none.
 */
export function resolveDocumentLoaderFactory(
  options: {
    readonly documentLoader?: DocumentLoader;
    readonly documentLoaderFactory?: DocumentLoaderFactory;
  },
  factoryOptions: { allowPrivateAddress: boolean; userAgent: string },
): DocumentLoader | undefined {
  const factory = options.documentLoaderFactory;
  if (factory == null) return undefined;
  if (options.documentLoader != null) {
    throw new FederationOptionError(
      "documentLoaderFactory",
      "Pass either the documentLoader option or documentLoaderFactory, not both.",
    );
  }
  if (typeof factory !== "function") {
    throw new FederationOptionError(
      "documentLoaderFactory",
      "The documentLoaderFactory option must be a function (options) => DocumentLoader.",
    );
  }
  const loader = factory(factoryOptions);
  if (typeof loader !== "function") {
    throw new FederationOptionError(
      "documentLoaderFactory",
      "The documentLoaderFactory option must return a document loader function.",
    );
  }
  return loader;
}
