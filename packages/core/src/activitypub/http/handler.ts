// The fetch entry: routes a request to what the federation registered
// (actors, objects, collections, inboxes, WebFinger, NodeInfo) and answers
// it.  Generic over the contexts: the federation's registry, options and
// context factory fill in the host.
import { type Actor, type DocumentLoader, type Object as APObject, Tombstone } from "@fedify/vocab";
import { assertKnownOptions } from "../../options/known-options.ts";
import { acceptsJsonLd } from "./negotiation.ts";
import {
  createActivityJsonResponse,
  createNotAcceptableResponse,
  createNotFoundResponse,
} from "./responses.ts";
import type { RouteTable } from "./route-table.ts";
import {
  createNodeInfoResponse,
  handleNodeInfoWellKnown,
  type NodeInfo,
} from "../nodeinfo/document.ts";
import { handleWebFinger, type WebFingerActor, type WebFingerLink } from "../webfinger/handler.ts";
import {
  type CollectionRegistry,
  isCollectionRoute,
  serveCollectionRoute,
} from "../collections/routes.ts";
import {
  handleInboxRequest,
  type InboxRequestContext,
  type InboxRequestHost,
  type InboxRequestOptions,
  type InboxRequestRegistry,
} from "../inbox/receive.ts";

/**
 * What {@link handleFederationRequest} reads of the request's context.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface FederationRequestContext<TContextData> extends InboxRequestContext<TContextData> {
  /** The request's URL. */
  readonly url: URL;
  /** The host handles are under, when no `handleHost` is set. */
  readonly host: string;
  /** Loads remote documents (and the contexts of served objects). */
  readonly documentLoader: DocumentLoader;
  /** The URI of the NodeInfo document. */
  getNodeInfoUri(): URL;
  /**
   * An actor's URI.
   * @param identifier The actor's identifier.
   */
  getActorUri(identifier: string): URL;
  /**
   * What a URI of this server stands for, or `null`.
   * @param uri The URI.
   */
  parseUri(uri: URL): { readonly type: string; readonly identifier?: string | null } | null;
}

/**
 * The registrations {@link handleFederationRequest} routes to: the part
 * of a federation's registry it uses.
 * @typeParam TContext The request's context.
 * @typeParam TInboxContext The context an idempotency key callback gets.
 * @since 0.4.0
 */
export interface FederationRequestRegistry<TContext, TInboxContext>
  extends
    Omit<InboxRequestRegistry<TContext, TInboxContext>, "actor">,
    CollectionRegistry<TContext> {
  readonly routes: Pick<RouteTable, "route" | "build">;
  readonly inboxPath?: string | undefined;
  /** The outbox listeners' path, when there are any (0.4.0). */
  readonly outboxListenerPath?: string | undefined;
  readonly actor?: {
    readonly dispatcher: (
      ctx: TContext,
      identifier: string,
    ) => Actor | Tombstone | null | Promise<Actor | Tombstone | null>;
    readonly handleMapper?:
      | ((ctx: TContext, username: string) => string | null | Promise<string | null>)
      | undefined;
    readonly aliasMapper?:
      | ((
        ctx: TContext,
        resource: URL,
      ) =>
        | { readonly identifier: string }
        | { readonly username: string }
        | null
        | Promise<{ readonly identifier: string } | { readonly username: string } | null>)
      | undefined;
    readonly authorize?:
      | ((ctx: TContext, identifier: string) => boolean | Promise<boolean>)
      | undefined;
  } | undefined;
  readonly objects: ReadonlyMap<string, {
    readonly dispatcher: (
      ctx: TContext,
      values: Readonly<Record<string, string>>,
    ) => APObject | null | Promise<APObject | null>;
    readonly authorize?:
      | ((ctx: TContext, values: Readonly<Record<string, string>>) => boolean | Promise<boolean>)
      | undefined;
  }>;
  readonly nodeInfo?:
    | { readonly dispatcher: (ctx: TContext) => NodeInfo | Promise<NodeInfo> }
    | undefined;
  readonly webFingerLinks?:
    | ((
      ctx: TContext,
      resource: URL,
    ) => readonly WebFingerLink[] | Promise<readonly WebFingerLink[]>)
    | undefined;
}

/**
 * What {@link handleFederationRequest} needs from the federation.  Internal.
 * @typeParam TContextData The context data type.
 * @typeParam TContext The request's context (since 0.4.0).
 * @typeParam TInboxContext The context an idempotency key callback gets
 *                          (since 0.4.0).
 * @since 0.2.0
 */
export interface FederationRequestHost<
  TContextData,
  TContext extends FederationRequestContext<TContextData>,
  TInboxContext,
> extends InboxRequestHost<TContextData, TContext, TInboxContext> {
  readonly registry: FederationRequestRegistry<TContext, TInboxContext>;
  readonly options: InboxRequestOptions & { readonly handleHost?: string | undefined };
  /**
   * Answers a POST to an outbox, for the outbox listeners (0.4.0).
   * @param ctx The request's context.
   * @param identifier The outbox owner's identifier.
   * @param fallbacks The 404 and 401 answers.
   */
  handleOutboxPost?(
    ctx: TContext,
    identifier: string,
    fallbacks: {
      readonly onNotFound: (request: Request) => Response | Promise<Response>;
      readonly onUnauthorized: (request: Request) => Response | Promise<Response>;
    },
  ): Promise<Response>;
}

/**
 * Checks the arguments of `Federation.fetch()`.
 * @param request The request.
 * @param options The context data and the fallbacks.
 * @throws {TypeError} When the request is not a `Request` or the options
 *         have no `contextData`.
 * @throws {UnknownOptionError} When an option's name is unknown.
 * @since 0.4.0
 */
export function checkFetchArguments(request: unknown, options: unknown): void {
  if (!(request instanceof Request)) throw new TypeError("fetch() needs a Fetch API Request.");
  if (typeof options !== "object" || options == null || !("contextData" in options)) {
    throw new TypeError("fetch() needs options with contextData, e.g. { contextData: undefined }.");
  }
  assertKnownOptions(options, FETCH_OPTION_NAMES, { where: "fetch()" });
}

/**
 * The context data and the fallbacks of one request: the federation's
 * `FederationFetchOptions`.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface FederationRequestOptions<TContextData> {
  readonly contextData: TContextData;
  readonly onNotFound?: ((request: Request) => Response | Promise<Response>) | undefined;
  readonly onNotAcceptable?: ((request: Request) => Response | Promise<Response>) | undefined;
  readonly onUnauthorized?: ((request: Request) => Response | Promise<Response>) | undefined;
}

const GET_METHODS = ["GET", "HEAD"];
const FETCH_OPTION_NAMES: readonly string[] = [
  "contextData",
  "onNotFound",
  "onNotAcceptable",
  "onUnauthorized",
];

function methodNotAllowed(allow: string[]): Response {
  return new Response("Method Not Allowed", {
    status: 405,
    headers: { Allow: allow.join(", "), "Content-Type": "text/plain; charset=utf-8" },
  });
}

function unauthorized(): Response {
  return new Response("Unauthorized", {
    status: 401,
    headers: { "Content-Type": "text/plain; charset=utf-8", Vary: "Accept, Signature" },
  });
}

async function activityJson(
  documentLoader: DocumentLoader,
  object: APObject,
  status = 200,
): Promise<Response> {
  const document = await object.toJsonLd({ contextLoader: documentLoader });
  return createActivityJsonResponse(document, { status });
}

/**
 * Routes a request to what the federation registered: actors, objects,
 * collections, inboxes, WebFinger and NodeInfo.  Implements
 * `Federation.fetch()`, once its arguments are checked.
 * @param host The federation.
 * @param ctx The request's context (the request, since 0.4.0).
 * @param options The context data and the fallbacks.
 * @returns The response.
 * @since 0.2.0
 */
export async function handleFederationRequest<
  TContextData,
  TContext extends FederationRequestContext<TContextData>,
  TInboxContext,
>(
  host: FederationRequestHost<TContextData, TContext, TInboxContext>,
  ctx: TContext,
  options: FederationRequestOptions<TContextData>,
): Promise<Response> {
  const { request } = ctx;
  const onNotFound = options.onNotFound ?? (() => createNotFoundResponse());
  const onNotAcceptable = options.onNotAcceptable ?? (() => createNotAcceptableResponse());
  const onUnauthorized = options.onUnauthorized ?? (() => unauthorized());
  const { registry } = host;
  const url = new URL(request.url);
  const match = registry.routes.route(url.pathname);
  if (match == null) return await onNotFound(request);
  const { name, values } = match;
  const method = request.method.toUpperCase();

  // The inbox path takes POSTs for the listeners and, with an inbox
  // dispatcher, GETs for the inbox collection.
  const inboxGet = name === "inbox" && registry.inboxCollection != null &&
    GET_METHODS.includes(method);
  if ((name === "inbox" || name === "sharedInbox") && !inboxGet) {
    const allow = name === "inbox" && registry.inboxCollection != null ? GET_METHODS : [];
    if (method !== "POST" || (name === "inbox" && registry.inboxPath == null)) {
      return methodNotAllowed(registry.inboxPath == null ? allow : [...allow, "POST"]);
    }
    return await handleInboxRequest(
      host,
      ctx,
      name === "inbox" ? values.identifier : null,
      { onNotFound, onUnauthorized },
    );
  }
  if (name === "outbox" && registry.outboxListenerPath != null && host.handleOutboxPost != null) {
    if (method === "POST") {
      return await host.handleOutboxPost(ctx, values.identifier, { onNotFound, onUnauthorized });
    }
    if (!GET_METHODS.includes(method)) return methodNotAllowed([...GET_METHODS, "POST"]);
  }
  if (!GET_METHODS.includes(method)) return methodNotAllowed(GET_METHODS);

  switch (name) {
    case "webfinger":
      return await handleWebFingerRequest(host, ctx, onNotFound);
    case "nodeinfoWellKnown":
      if (registry.nodeInfo == null) return await onNotFound(request);
      return handleNodeInfoWellKnown(request, { nodeInfoUrl: ctx.getNodeInfoUri() });
    case "nodeinfo":
      return createNodeInfoResponse(await registry.nodeInfo!.dispatcher(ctx));
  }
  // Everything else is an ActivityPub resource: its URL may also be a page
  // of the application, which serves it to whoever does not ask for JSON-LD.
  if (!acceptsJsonLd(request)) return await onNotAcceptable(request);
  if (name === "actor") {
    const actor = registry.actor!;
    const found = await actor.dispatcher(ctx, values.identifier);
    if (found == null) return await onNotFound(request);
    if (actor.authorize != null && !await actor.authorize(ctx, values.identifier)) {
      return await onUnauthorized(request);
    }
    return await activityJson(ctx.documentLoader, found, found instanceof Tombstone ? 410 : 200);
  }
  if (isCollectionRoute(registry, name)) {
    const result = await serveCollectionRoute(ctx, registry, name, values);
    if (result.status !== "served") {
      return await (result.status === "unauthorized" ? onUnauthorized : onNotFound)(request);
    }
    return await activityJson(ctx.documentLoader, result.document);
  }
  const object = registry.objects.get(name.slice("object:".length));
  if (object == null) return await onNotFound(request);
  const found = await object.dispatcher(ctx, values);
  if (found == null) return await onNotFound(request);
  if (object.authorize != null && !await object.authorize(ctx, values)) {
    return await onUnauthorized(request);
  }
  return await activityJson(ctx.documentLoader, found, found instanceof Tombstone ? 410 : 200);
}

async function handleWebFingerRequest<
  TContextData,
  TContext extends FederationRequestContext<TContextData>,
  TInboxContext,
>(
  host: FederationRequestHost<TContextData, TContext, TInboxContext>,
  ctx: TContext,
  onNotFound: (request: Request) => Response | Promise<Response>,
): Promise<Response> {
  const actor = host.registry.actor;
  if (actor == null) return await onNotFound(ctx.request);
  const linksDispatcher = host.registry.webFingerLinks;
  const describe = async (
    identifier: string,
    fallbackUsername: string,
  ): Promise<WebFingerActor | null> => {
    const found = await actor.dispatcher(ctx, identifier);
    if (found == null || found instanceof Tombstone) return null;
    const resource = ctx.url.searchParams.get("resource") ?? "";
    const profile = found.url instanceof URL ? found.url : null;
    return {
      actorUri: ctx.getActorUri(identifier),
      username: found.preferredUsername?.toString() ?? fallbackUsername,
      aliases: profile == null ? [] : [profile],
      links: [
        ...(profile == null ? [] : [{
          rel: "http://webfinger.net/rel/profile-page",
          type: "text/html",
          href: profile.href,
        }]),
        ...(linksDispatcher == null || !URL.canParse(resource)
          ? []
          : await linksDispatcher(ctx, new URL(resource))),
      ],
    };
  };
  const lookupUsername = async (username: string) => {
    const identifier = actor.handleMapper == null
      ? username
      : await actor.handleMapper(ctx, username);
    return identifier == null ? null : await describe(identifier, username);
  };
  const { aliasMapper } = actor;
  return await handleWebFinger(ctx.request, {
    host: host.options.handleHost ?? ctx.host,
    lookupUsername,
    ...(aliasMapper == null ? {} : {
      lookupAlias: async (uri: URL) => {
        const mapped = await aliasMapper(ctx, uri);
        if (mapped != null && typeof mapped === "object") {
          if ("identifier" in mapped && typeof mapped.identifier === "string") {
            return await describe(mapped.identifier, mapped.identifier);
          }
          if ("username" in mapped && typeof mapped.username === "string") {
            return await lookupUsername(mapped.username);
          }
        }
        return null;
      },
    }),
    lookupActorUri: async (uri) => {
      const parsed = ctx.parseUri(uri);
      if (parsed?.type !== "actor" || typeof parsed.identifier !== "string") return null;
      return await describe(parsed.identifier, parsed.identifier);
    },
  });
}
