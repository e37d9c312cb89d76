import { type DocumentLoader, type Object as APObject, Tombstone } from "@fedify/vocab";
import { acceptsJsonLd } from "../activitypub/http/negotiation.ts";
import {
  createActivityJsonResponse,
  createNotAcceptableResponse,
  createNotFoundResponse,
} from "../activitypub/http/responses.ts";
import {
  createNodeInfoResponse,
  handleNodeInfoWellKnown,
} from "../activitypub/nodeinfo/document.ts";
import { handleWebFinger, type WebFingerActor } from "../activitypub/webfinger/handler.ts";
import { isCollectionRoute, serveCollectionRoute } from "./collections.ts";
import { handleInboxRequest, type InboxRequestHost } from "../activitypub/inbox/receive.ts";
import type { FederationFetchOptions } from "./api.ts";
import type { InboxContext, RequestContext } from "./context-api.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { FederationRegistry } from "./registry-api.ts";

/**
 * What {@link handleFederationRequest} needs from the federation.  Internal.
 * @since 0.2.0
 */
export interface FederationRequestHost<TContextData>
  extends InboxRequestHost<TContextData, RequestContext<TContextData>, InboxContext<TContextData>> {
  readonly registry: FederationRegistry<TContextData>;
  readonly options: ResolvedFederationOptions;
  createRequestContext(request: Request, data: TContextData): RequestContext<TContextData>;
}

const GET_METHODS = ["GET", "HEAD"];

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
 * `Federation.fetch()`.
 * @param host The federation.
 * @param request The request.
 * @param options The context data and the fallbacks.
 * @returns The response.
 * @since 0.2.0
 */
export async function handleFederationRequest<TContextData>(
  host: FederationRequestHost<TContextData>,
  request: Request,
  options: FederationFetchOptions<TContextData>,
): Promise<Response> {
  const onNotFound = options.onNotFound ?? (() => createNotFoundResponse());
  const onNotAcceptable = options.onNotAcceptable ?? (() => createNotAcceptableResponse());
  const onUnauthorized = options.onUnauthorized ?? (() => unauthorized());
  const { registry } = host;
  const url = new URL(request.url);
  const match = registry.routes.route(url.pathname);
  if (match == null) return await onNotFound(request);
  const { name, values } = match;
  const ctx = host.createRequestContext(request, options.contextData);
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

async function handleWebFingerRequest<TContextData>(
  host: FederationRequestHost<TContextData>,
  ctx: RequestContext<TContextData>,
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
      if (parsed?.type !== "actor") return null;
      return await describe(parsed.identifier, parsed.identifier);
    },
  });
}
