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
 * A server's NodeInfo 2.1 metadata, as an application describes it.
 * @since 0.2.0
 */
export interface NodeInfo {
  readonly software: {
    /** Lower-case letters, digits and hyphens, e.g. `"myapp"`. */
    readonly name: string;
    readonly version: string;
    readonly repository?: URL;
    readonly homepage?: URL;
  };
  /** At least one; usually `["activitypub"]`. */
  readonly protocols: readonly NodeInfoProtocol[];
  readonly services?: {
    readonly inbound?: readonly string[];
    readonly outbound?: readonly string[];
  };
  /**
   * Whether anyone may sign up.  Optional as in Fedify.
   * @default `false`
   */
  readonly openRegistrations?: boolean;
  readonly usage: {
    readonly users: {
      readonly total?: number;
      readonly activeHalfyear?: number;
      readonly activeMonth?: number;
    };
    readonly localPosts?: number;
    readonly localComments?: number;
  };
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
