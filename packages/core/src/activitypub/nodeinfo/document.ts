/**
 * The protocols a NodeInfo 2.1 document may list.
 * @since 0.2.0
 */
export type NodeInfoProtocol =
  | "activitypub"
  | "buddycloud"
  | "dfrn"
  | "diaspora"
  | "libertree"
  | "ostatus"
  | "pumpio"
  | "tent"
  | "xmpp"
  | "zot";

/**
 * Fedify's name for {@link NodeInfoProtocol}.
 * @since 0.3.0
 */
export type Protocol = NodeInfoProtocol;

/**
 * The services a NodeInfo document may list as `services.inbound` (the
 * sites a server reads from), as Fedify names them.
 * @since 0.3.0
 */
export type InboundService =
  | "atom1.0"
  | "gnusocial"
  | "imap"
  | "pnut"
  | "pop3"
  | "pumpio"
  | "rss2.0"
  | "twitter";

/**
 * The services a NodeInfo document may list as `services.outbound` (the
 * sites a server publishes to), as Fedify names them.
 * @since 0.3.0
 */
export type OutboundService =
  | "atom1.0"
  | "blogger"
  | "buddycloud"
  | "diaspora"
  | "dreamwidth"
  | "drupal"
  | "facebook"
  | "friendica"
  | "gnusocial"
  | "google"
  | "insanejournal"
  | "libertree"
  | "linkedin"
  | "livejournal"
  | "mediagoblin"
  | "myspace"
  | "pinterest"
  | "pnut"
  | "posterous"
  | "pumpio"
  | "redmatrix"
  | "rss2.0"
  | "smtp"
  | "tent"
  | "tumblr"
  | "twitter"
  | "wordpress"
  | "xmpp";

/**
 * A JSON value, as `getNodeInfo(url, { parse: "none" })` returns it.
 * @since 0.3.0
 */
export type JsonValue =
  | { readonly [key: string]: JsonValue | undefined }
  | readonly JsonValue[]
  | string
  | number
  | boolean
  | null;

/**
 * The server software of a NodeInfo document.
 * @since 0.3.0
 */
export interface Software {
  /** Lower-case letters, digits and hyphens, e.g. `"myapp"`. */
  readonly name: string;
  /** The version, e.g. `"1.2.3"`. */
  readonly version: string;
  /** Where its source code is. */
  readonly repository?: URL;
  /** Its homepage. */
  readonly homepage?: URL;
}

/**
 * The services of a NodeInfo document.  Any string is accepted; the
 * schema's values are {@link InboundService} and {@link OutboundService}.
 * @since 0.3.0
 */
export interface Services {
  /** The sites the server reads from. */
  readonly inbound?: readonly string[];
  /** The sites the server publishes to. */
  readonly outbound?: readonly string[];
}

/**
 * The usage statistics of a NodeInfo document: non-negative integers.
 * @since 0.3.0
 */
export interface Usage {
  /** Registered users: in total, active in the last 180 and 30 days. */
  readonly users: {
    readonly total?: number;
    readonly activeHalfyear?: number;
    readonly activeMonth?: number;
  };
  /** Posts made by local users. */
  readonly localPosts?: number;
  /** Comments made by local users. */
  readonly localComments?: number;
}

/**
 * A server's NodeInfo 2.1 metadata, as an application describes it; the
 * same shape as Fedify's `NodeInfo`, with `localPosts` and
 * `localComments` optional (0 by default).
 * @since 0.2.0
 */
export interface NodeInfo {
  readonly software: Software;
  /** At least one; usually `["activitypub"]`. */
  readonly protocols: readonly NodeInfoProtocol[];
  readonly services?: Services;
  /**
   * Whether anyone may sign up.  Optional as in Fedify since 0.3.0.
   * @default `false`
   */
  readonly openRegistrations?: boolean;
  readonly usage: Usage;
  /** Free-form metadata. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * The `profile` of the NodeInfo 2.1 schema, used as its link relation and
 * in its content type.
 * @since 0.2.0
 */
export const NODEINFO_2_1_SCHEMA = "http://nodeinfo.diaspora.software/ns/schema/2.1";

function count(value: number | undefined, path: string): number | undefined {
  if (value == null) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`NodeInfo ${path} must be a non-negative integer; got ${value}.`);
  }
  return value;
}

/**
 * Serializes NodeInfo metadata as a NodeInfo 2.1 JSON document.
 * @param nodeInfo The metadata.
 * @returns The JSON document (`version: "2.1"`), ready for `JSON.stringify`.
 * @throws {TypeError} When the software name is not lower-case letters,
 *         digits and hyphens, there is no protocol, or a count is not a
 *         non-negative integer.
 * @since 0.2.0
 */
export function serializeNodeInfo(nodeInfo: NodeInfo): Record<string, unknown> {
  const { software, usage } = nodeInfo;
  if (!/^[a-z0-9-]+$/.test(software.name)) {
    throw new TypeError(
      `NodeInfo software.name must be lower-case letters, digits and hyphens; got ${
        JSON.stringify(software.name)
      }.`,
    );
  }
  if (nodeInfo.protocols.length === 0) {
    throw new TypeError('NodeInfo protocols must list at least one protocol, e.g. "activitypub".');
  }
  return {
    version: "2.1",
    software: {
      name: software.name,
      version: software.version,
      ...(software.repository == null ? {} : { repository: software.repository.href }),
      ...(software.homepage == null ? {} : { homepage: software.homepage.href }),
    },
    protocols: [...nodeInfo.protocols],
    services: {
      inbound: [...(nodeInfo.services?.inbound ?? [])],
      outbound: [...(nodeInfo.services?.outbound ?? [])],
    },
    openRegistrations: nodeInfo.openRegistrations ?? false,
    usage: {
      users: {
        total: count(usage.users.total, "usage.users.total"),
        activeHalfyear: count(usage.users.activeHalfyear, "usage.users.activeHalfyear"),
        activeMonth: count(usage.users.activeMonth, "usage.users.activeMonth"),
      },
      localPosts: count(usage.localPosts, "usage.localPosts") ?? 0,
      localComments: count(usage.localComments, "usage.localComments") ?? 0,
    },
    metadata: { ...(nodeInfo.metadata ?? {}) },
  };
}

/**
 * Answers with a NodeInfo 2.1 document, with the schema's profile in its
 * content type and `Access-Control-Allow-Origin: *`.
 * @param nodeInfo The metadata.
 * @returns The response.
 * @throws {TypeError} When the metadata is invalid; see
 *         {@link serializeNodeInfo}.
 * @since 0.2.0
 */
export function createNodeInfoResponse(nodeInfo: NodeInfo): Response {
  return new Response(JSON.stringify(serializeNodeInfo(nodeInfo)), {
    headers: {
      "Content-Type": `application/json; profile="${NODEINFO_2_1_SCHEMA}#"`,
      "Access-Control-Allow-Origin": "*",
    },
  });
}

/**
 * Answers `/.well-known/nodeinfo`: the discovery document linking to the
 * NodeInfo 2.1 document.
 * @param _request The request (any method; routing is the caller's).
 * @param options Where the NodeInfo 2.1 document is served.
 * @returns The response.
 * @since 0.2.0
 * @example
 * ```ts
 * import { handleNodeInfoWellKnown } from "./document.ts";
 *
 * const response = handleNodeInfoWellKnown(
 *   new Request("https://example.com/.well-known/nodeinfo"),
 *   { nodeInfoUrl: new URL("https://example.com/nodeinfo/2.1") },
 * );
 * ```
 */
export function handleNodeInfoWellKnown(
  _request: Request,
  options: { readonly nodeInfoUrl: URL },
): Response {
  return new Response(
    JSON.stringify({ links: [{ rel: NODEINFO_2_1_SCHEMA, href: options.nodeInfoUrl.href }] }),
    {
      headers: {
        "Content-Type": "application/json",
        "Access-Control-Allow-Origin": "*",
      },
    },
  );
}

/**
 * Fedify's name for {@link serializeNodeInfo}: NodeInfo metadata as a
 * NodeInfo 2.1 JSON document.
 * @param nodeInfo The metadata.
 * @returns The JSON document.
 * @throws {TypeError} When the metadata is invalid.
 * @since 0.3.0
 */
export function nodeInfoToJson(nodeInfo: NodeInfo): Record<string, unknown> {
  return serializeNodeInfo(nodeInfo);
}
