import { getLogger } from "@logtape/logtape";
import { messageOf } from "../json-values.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveIntegerOption } from "../../options/value-options.ts";
import { PrivateAddressError } from "../network/errors.ts";
import { fetchRemote, type RemoteRequestLimits } from "../network/outgoing-http.ts";
import type { JsonValue, NodeInfo, NodeInfoProtocol } from "./document.ts";
import { DEFAULT_USER_AGENT } from "../../http/user-agent.ts";

const logger = getLogger(["fedwork", "activitypub", "nodeinfo"]);

const PROTOCOLS: readonly NodeInfoProtocol[] = [
  "activitypub",
  "buddycloud",
  "dfrn",
  "diaspora",
  "libertree",
  "ostatus",
  "pumpio",
  "tent",
  "xmpp",
  "zot",
];

// The link relations of the NodeInfo schemas a discovery document may list,
// newest first: a server listing several is asked for the newest.
const SCHEMA_RELATIONS = ["2.2", "2.1", "2.0", "1.1", "1.0"].map((version) =>
  `http://nodeinfo.diaspora.software/ns/schema/${version}`
);

// The bounds on a document's free-form metadata.  The deepest metadata
// of the servers we know of (Pleroma's and Akkoma's MRF settings) nests
// about five levels and takes tens of KiB; a 5,000-deep one overflows the
// stack of the JSON.stringify() that stores or logs it.
const DEFAULT_MAX_METADATA_DEPTH = 16;
const DEFAULT_MAX_METADATA_BYTES = 128 * 1024;

/**
 * The bounds {@link parseNodeInfo} and {@link getNodeInfo} keep on a
 * document's free-form `metadata`, in every parse mode but `"none"`: a
 * `metadata` past either is dropped (the rest of the document is kept) and
 * the drop is logged at the debug level.
 * @since 0.4.0
 */
export interface NodeInfoMetadataLimits {
  /**
   * How deep `metadata` may nest: the object itself is depth 1, an object
   * or array in it depth 2, and so on.
   * @default 16
   */
  readonly maxMetadataDepth?: number;
  /**
   * How large `metadata` may be, as the length of its JSON (each character
   * counted as one byte).
   * @default 131,072 (128 KiB)
   */
  readonly maxMetadataBytes?: number;
}

/**
 * Options for {@link getNodeInfo} and `Context.lookupNodeInfo()`, Fedify's
 * with the limits every Fedwork request keeps and the bounds on
 * `metadata` (since 0.4.0).
 * @since 0.3.0
 */
export interface GetNodeInfoOptions extends RemoteRequestLimits, NodeInfoMetadataLimits {
  /**
   * Whether the URL is the NodeInfo document itself; otherwise it is found
   * through the `/.well-known/nodeinfo` of the URL's origin.
   * @default `false`
   */
  readonly direct?: boolean;
  /**
   * How the document is read: `"strict"` answers `undefined` for an invalid
   * one, `"best-effort"` keeps what is valid, `"none"` returns the JSON as
   * it came.
   * @default `"strict"`
   */
  readonly parse?: "strict" | "best-effort" | "none";
  /**
   * The `User-Agent` header.
   * @default `"Fedwork/<version>"`
   */
  readonly userAgent?: string;
  /**
   * Whether loopback and private addresses may be asked (tests and
   * development only).
   * @default `false`
   */
  readonly allowPrivateAddress?: boolean;
  /** Aborts the requests. */
  readonly signal?: AbortSignal;
}

/**
 * Options for {@link parseNodeInfo}, with the bounds on `metadata` (since
 * 0.4.0).
 * @since 0.3.0
 */
export interface ParseNodeInfoOptions extends NodeInfoMetadataLimits {
  /**
   * Whether an invalid document is read as far as it goes (unknown
   * protocols and services dropped, bad counts left out, a missing version
   * read as `""`) instead of refused.
   * @default `false`
   */
  readonly tryBestEffort?: boolean;
}

/**
 * Fetches a server's NodeInfo document, as Fedify's `getNodeInfo()` does:
 * through `/.well-known/nodeinfo` (the newest schema it links to), or
 * directly.  Both requests go through `fetchRemote()` with its limits.
 * @param url The server (only its origin counts), or with `direct` the
 *            document's URL.
 * @param options How to fetch and read it.
 * @returns The metadata, or `undefined` when the server has none, fails or
 *          answers an invalid document; a `metadata` past
 *          `maxMetadataDepth` or `maxMetadataBytes` is left out.
 * @throws {RangeError} When `maxMetadataDepth` or `maxMetadataBytes` is
 *         not a positive integer.
 * @throws {PrivateAddressError} When the server is on a loopback or private
 *         address and `allowPrivateAddress` is not set.
 * @throws {UnknownOptionError} When an option is not one it takes.
 * @throws {TypeError} When `userAgent` is not a string.
 * @since 0.3.0
 * @example
 * ```ts
 * import { getNodeInfo } from "@fedwork/core";
 *
 * const info = await getNodeInfo("https://mastodon.social/");
 * console.log(info?.software.name, info?.usage.users.total);
 * ```
 */
export function getNodeInfo(
  url: URL | string,
  options?: GetNodeInfoOptions & { readonly parse?: "strict" | "best-effort" },
): Promise<NodeInfo | undefined>;
/**
 * Fetches a server's NodeInfo document as JSON, unread.
 * @param url The server, or with `direct` the document's URL.
 * @param options How to fetch it; `parse` is `"none"`.
 * @returns The JSON, or `undefined` when the server has none or fails.
 * @throws {PrivateAddressError} When the server is not public and
 *         `allowPrivateAddress` is not set.
 * @since 0.3.0
 */
export function getNodeInfo(
  url: URL | string,
  options: GetNodeInfoOptions & { readonly parse: "none" },
): Promise<JsonValue | undefined>;
export async function getNodeInfo(
  url: URL | string,
  options: GetNodeInfoOptions = {},
): Promise<JsonValue | NodeInfo | undefined> {
  assertKnownOptions(options, GET_NODE_INFO_OPTIONS, { where: "getNodeInfo()" });
  if (options.userAgent != null && typeof options.userAgent !== "string") {
    throw new TypeError("The userAgent option of getNodeInfo() must be a string.");
  }
  const limits = resolveMetadataLimits(options);
  const target = new URL(url);
  let json: unknown;
  try {
    const documentUrl = options.direct ? target : await discover(target, options);
    if (documentUrl == null) return undefined;
    json = await fetchJson(documentUrl, options);
  } catch (error) {
    if (error instanceof PrivateAddressError) throw error;
    logger.debug("NodeInfo lookup of {url} failed: {reason}", {
      url: target.href,
      reason: messageOf(error),
    });
    return undefined;
  }
  if (json === undefined) return undefined;
  if (options.parse === "none") return json as JsonValue;
  const nodeInfo = parseNodeInfo(json, {
    tryBestEffort: options.parse === "best-effort",
    ...limits,
  });
  if (nodeInfo == null) {
    logger.debug("NodeInfo of {url} is not a valid NodeInfo document.", { url: target.href });
    return undefined;
  }
  return nodeInfo;
}

async function discover(server: URL, options: GetNodeInfoOptions): Promise<URL | undefined> {
  const wellKnown = new URL("/.well-known/nodeinfo", server);
  const json = await fetchJson(wellKnown, options);
  const links = typeof json === "object" && json != null
    ? (json as { links?: unknown }).links
    : undefined;
  if (!Array.isArray(links)) {
    logger.debug("{url} lists no NodeInfo links.", { url: wellKnown.href });
    return undefined;
  }
  for (const rel of SCHEMA_RELATIONS) {
    for (const link of links.slice(0, 100)) {
      if (typeof link !== "object" || link == null) continue;
      const { rel: linkRel, href } = link as { rel?: unknown; href?: unknown };
      if (linkRel !== rel && linkRel !== `${rel}#`) continue;
      if (typeof href !== "string") continue;
      const documentUrl = URL.parse(href, wellKnown);
      if (documentUrl?.protocol === "https:" || documentUrl?.protocol === "http:") {
        return documentUrl;
      }
    }
  }
  logger.debug("{url} links to no NodeInfo schema Fedwork reads.", { url: wellKnown.href });
  return undefined;
}

async function fetchJson(url: URL, options: GetNodeInfoOptions): Promise<unknown> {
  const response = await fetchRemote(url, {
    headers: { Accept: "application/json" },
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    allowPrivateAddress: options.allowPrivateAddress ?? false,
    ...(options.timeout == null ? {} : { timeout: options.timeout }),
    ...(options.maxBodyBytes == null ? {} : { maxBodyBytes: options.maxBodyBytes }),
    ...(options.maxRedirects == null ? {} : { maxRedirects: options.maxRedirects }),
    ...(options.signal == null ? {} : { signal: options.signal }),
  });
  if (!response.ok) {
    logger.debug("{url} answered {status}.", { url: url.href, status: response.status });
    return undefined;
  }
  return response.json();
}

const GET_NODE_INFO_OPTIONS: readonly (keyof GetNodeInfoOptions)[] = [
  "direct",
  "parse",
  "userAgent",
  "allowPrivateAddress",
  "signal",
  "timeout",
  "maxBodyBytes",
  "maxRedirects",
  "maxMetadataDepth",
  "maxMetadataBytes",
];

function resolveMetadataLimits(
  options: NodeInfoMetadataLimits,
): Required<NodeInfoMetadataLimits> {
  return {
    maxMetadataDepth: positiveIntegerOption(
      options.maxMetadataDepth,
      "maxMetadataDepth",
      DEFAULT_MAX_METADATA_DEPTH,
    ),
    maxMetadataBytes: positiveIntegerOption(
      options.maxMetadataBytes,
      "maxMetadataBytes",
      DEFAULT_MAX_METADATA_BYTES,
    ),
  };
}

/**
 * Which bound a JSON value passes first, walking it without recursion (a
 * hostile value may nest thousands deep) and stopping there: `"depth"`,
 * `"bytes"`, or `null` when it keeps both.
 */
function exceededBound(value: unknown, maxDepth: number, maxBytes: number): string | null {
  const stack: [unknown, number][] = [[value, 1]];
  let bytes = 0;
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current === "string") {
      bytes += current.length + 2;
    } else if (typeof current !== "object" || current == null) {
      bytes += String(current).length;
    } else {
      if (depth > maxDepth) return "depth";
      // Brackets and commas, and for objects the quoted keys and colons,
      // are counted before the children are pushed, so that a huge array
      // stops here.
      const children = Array.isArray(current) ? current : Object.values(current);
      bytes += 2 + children.length;
      if (!Array.isArray(current)) {
        for (const key of Object.keys(current)) bytes += key.length + 3;
      }
      if (bytes > maxBytes) return "bytes";
      for (const child of children) stack.push([child, depth + 1]);
    }
    if (bytes > maxBytes) return "bytes";
  }
  return null;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value != null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function optionalUrl(value: unknown): URL | null | undefined {
  if (value == null) return undefined;
  if (typeof value !== "string") return null;
  const url = URL.parse(value);
  return url?.protocol === "https:" || url?.protocol === "http:" ? url : null;
}

/**
 * Reads a NodeInfo document (2.0 or 2.1 JSON) into {@link NodeInfo}, as
 * Fedify's `parseNodeInfo()` does.
 * A `metadata` nested deeper than `maxMetadataDepth` or larger than
 * `maxMetadataBytes` is left out, in both modes, so that a hostile server
 * cannot hand the caller a value its `JSON.stringify()` overflows on.
 * @param data The JSON document.
 * @param options Whether to read an invalid document as far as it goes,
 *                and the bounds on `metadata`.
 * @returns The metadata, or `null` when the document is invalid (in strict
 *          mode) or not even an object with a software name.
 * @throws {RangeError} When `maxMetadataDepth` or `maxMetadataBytes` is
 *         not a positive integer.
 * @since 0.3.0
 */
export function parseNodeInfo(data: unknown, options: ParseNodeInfoOptions = {}): NodeInfo | null {
  const lenient = options.tryBestEffort ?? false;
  const limits = resolveMetadataLimits(options);
  if (!isObject(data) || !isObject(data.software)) return null;
  const software = data.software;
  if (typeof software.name !== "string") return null;
  let name: string = software.name;
  if (!/^[a-z0-9-]+$/.test(name)) {
    if (!lenient) return null;
    name = name.trim().toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  }
  let version = "";
  if (typeof software.version === "string") version = software.version;
  else if (!lenient) return null;
  const repository = optionalUrl(software.repository);
  const homepage = optionalUrl(software.homepage);
  if ((repository === null || homepage === null) && !lenient) return null;

  const protocolList = Array.isArray(data.protocols) ? data.protocols : null;
  if (protocolList == null && !lenient) return null;
  const protocols = (protocolList ?? []).filter((protocol): protocol is NodeInfoProtocol =>
    PROTOCOLS.includes(protocol as NodeInfoProtocol)
  );
  if (!lenient && (protocols.length === 0 || protocols.length !== protocolList!.length)) {
    return null;
  }

  let services: NodeInfo["services"];
  if (isObject(data.services)) {
    const read = (value: unknown): string[] | null => {
      if (value == null) return [];
      if (!Array.isArray(value)) return lenient ? [] : null;
      const strings = value.filter((item): item is string => typeof item === "string");
      return strings.length === value.length || lenient ? strings : null;
    };
    const inbound = read(data.services.inbound);
    const outbound = read(data.services.outbound);
    if (inbound == null || outbound == null) return null;
    services = { inbound, outbound };
  } else if (data.services != null && !lenient) {
    return null;
  }

  let openRegistrations: boolean | undefined;
  if (typeof data.openRegistrations === "boolean") openRegistrations = data.openRegistrations;
  else if (data.openRegistrations != null && !lenient) return null;

  const usage = isObject(data.usage) ? data.usage : null;
  if (usage == null && !lenient) return null;
  const users = isObject(usage?.users) ? usage.users : null;
  if (users == null && !lenient) return null;
  const counts: Record<string, number> = {};
  for (const key of ["total", "activeHalfyear", "activeMonth"]) {
    const value = users?.[key];
    if (isCount(value)) counts[key] = value;
    else if (value != null && !lenient) return null;
  }
  const localCount = (value: unknown): number | null => {
    if (isCount(value)) return value;
    return value == null || lenient ? 0 : null;
  };
  const localPosts = localCount(usage?.localPosts);
  const localComments = localCount(usage?.localComments);
  if (localPosts == null || localComments == null) return null;

  let metadata: Record<string, unknown> | undefined;
  if (isObject(data.metadata)) {
    const exceeded = exceededBound(
      data.metadata,
      limits.maxMetadataDepth,
      limits.maxMetadataBytes,
    );
    if (exceeded == null) {
      metadata = data.metadata;
    } else {
      // Free-form, so outside what strict mode checks: the rest of the
      // document is still good.
      logger.debug("Leaving out the NodeInfo metadata of {software}: it passes {bound}.", {
        software: name,
        bound: exceeded === "depth" ? "maxMetadataDepth" : "maxMetadataBytes",
        ...limits,
      });
    }
  } else if (data.metadata != null && !lenient) {
    return null;
  }

  return {
    software: {
      name,
      version,
      ...(repository == null ? {} : { repository }),
      ...(homepage == null ? {} : { homepage }),
    },
    protocols,
    ...(services == null ? {} : { services }),
    ...(openRegistrations == null ? {} : { openRegistrations }),
    usage: { users: counts, localPosts, localComments },
    ...(metadata == null ? {} : { metadata }),
  };
}
