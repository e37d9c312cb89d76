// The web process's Fetch handler: federation.fetch() answers ActivityPub
// (actors, inboxes, followers, notes, WebFinger, NodeInfo); a browser asking
// for the same URLs gets HTML through onNotAcceptable; everything else (the
// home page and a small JSON API to act as a user) goes through onNotFound.
//
// What anyone may see: public and unlisted notes only.  Followers-only and
// direct notes a user received are in the API's answer only to a request
// carrying the API token; the HTML pages, which no browser authenticates
// to, never show them.
import { Note } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { bearerToken, crossSiteRefusal, readJsonObject, tokenMatches } from "./api-request.ts";
import type { Microblog } from "./federation.ts";
import { renderHome, renderMessage, renderPost, renderProfile } from "./html.ts";
import type { Audience } from "./visibility.ts";

const logger = getLogger(["fedwork", "microblog", "web"]);

/** Options for {@link createFetchHandler}. */
export interface FetchHandlerOptions {
  /**
   * The bearer token the JSON API's POSTs must carry, and that lets a GET
   * see followers-only and direct notes.  Without one, anybody who reaches
   * the port can post as any user (fine on loopback only), and nobody sees
   * those notes through the API.  Either way, cross-site requests from a
   * browser are refused.
   */
  readonly apiToken?: string;
}

// One fixed message per status: a client is never told an exception's or a
// library's text, which can name internals; the log gets the details.
const MESSAGES = {
  400: "The request is invalid.",
  401: "A valid bearer token is required.",
  403: "The API takes same-origin application/json requests only.",
  404: "Not found.",
  405: "Method not allowed.",
  408: "The request body took too long.",
  413: "The request body is too large.",
  422: "The request could not be carried out.",
  500: "Internal server error.",
} as const;

type ErrorStatus = keyof typeof MESSAGES;

const json = (value: unknown, status = 200, headers?: HeadersInit) =>
  Response.json(value, { status, headers });

/** An error answer; `field` names the offending field of the request body. */
const problem = (status: ErrorStatus, field?: string, headers?: HeadersInit) =>
  json(
    field == null ? { error: MESSAGES[status] } : { error: MESSAGES[status], field },
    status,
    headers,
  );

// The API's actions, the body field each takes and its longest length.
const ACTIONS: Readonly<Record<string, { readonly field: string; readonly maxLength: number }>> = {
  posts: { field: "content", maxLength: 5_000 },
  follow: { field: "target", maxLength: 2_048 },
  unfollow: { field: "target", maxLength: 2_048 },
  like: { field: "object", maxLength: 2_048 },
};

// An action's body is one short field: anything larger is not ours.
const BODY_LIMITS = { maxBytes: 64 * 1024, timeoutMs: 10_000 };

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The whole web app as a Fetch API handler. */
export function createFetchHandler(
  app: Microblog,
  options: FetchHandlerOptions = {},
): (request: Request) => Promise<Response> {
  const { federation, store } = app;
  const ctx = () => federation.createContext(app.origin, undefined);
  const handle = (user: string) => `@${user}@${app.origin.host}`;

  async function html(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const parsed = ctx().parseUri(new URL(path, app.origin));
    const name = parsed == null
      ? undefined
      : parsed.type === "object"
      ? parsed.values.identifier
      : "identifier" in parsed
      ? parsed.identifier
      : undefined;
    if (name == null || await store.getUser(name) == null) {
      return renderMessage(404, "No such page");
    }
    if (parsed?.type === "object") {
      const post = await store.getPost(name, parsed.values.id);
      if (post == null) return renderMessage(404, "No such post");
      return renderPost(post, ctx().getActorUri(name).href);
    }
    return renderProfile({
      name,
      handle: handle(name),
      posts: await store.listPosts(name),
      followers: await store.listFollowers(name),
      following: await store.listFollowing(name),
      // A page has no signed-in viewer: what anyone may see, and no more.
      received: await store.listReceivedNotes(name, "anyone"),
      postUrl: (post) => ctx().getObjectUri(Note, { identifier: name, id: post.id }).href,
    });
  }

  /** Who the request is: the owner (the right token), anyone, or refused. */
  async function audienceOf(request: Request): Promise<Audience | undefined> {
    const sent = bearerToken(request);
    // Without a configured token there is nobody to authenticate as.
    if (sent === undefined || options.apiToken == null) return "anyone";
    if (sent == null || !await tokenMatches(sent, options.apiToken)) return undefined;
    return "owner";
  }

  async function state(user: string, audience: Audience): Promise<Response> {
    return json({
      name: user,
      handle: handle(user),
      url: ctx().getActorUri(user).href,
      posts: (await store.listPosts(user)).map((post) => ({
        ...post,
        url: ctx().getObjectUri(Note, { identifier: user, id: post.id }).href,
      })),
      followers: await store.listFollowers(user),
      following: await store.listFollowing(user),
      received: await store.listReceivedNotes(user, audience),
    });
  }

  async function api(request: Request, user: string, action: string): Promise<Response> {
    const { method } = request;
    const path = new URL(request.url).pathname;
    // First of all, so that a forged request learns nothing, not even
    // whether the user exists.
    if (!READ_METHODS.has(method)) {
      const reason = crossSiteRefusal(request, app.origin);
      if (reason != null) {
        logger.warn("Refused a cross-site {method} request to {path} ({reason}).", {
          method,
          path,
          reason,
          origin: request.headers.get("origin"),
          secFetchSite: request.headers.get("sec-fetch-site"),
          contentType: request.headers.get("content-type"),
        });
        return problem(403);
      }
    }
    const audience = await audienceOf(request);
    const unauthorized = () => problem(401, undefined, { "WWW-Authenticate": "Bearer" });
    if (audience == null) return unauthorized();
    if (await store.getUser(user) == null) return problem(404);
    if (action === "") {
      return method === "GET" ? await state(user, audience) : problem(405, undefined, {
        Allow: "GET",
      });
    }
    const spec = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
    if (spec == null) return problem(404);
    if (method !== "POST") return problem(405, undefined, { Allow: "POST" });
    if (options.apiToken != null && audience !== "owner") return unauthorized();
    const body = await readJsonObject(request, BODY_LIMITS);
    if (!body.ok) {
      logger.debug("Refused the body of a {action} request of {user} ({status}).", {
        action,
        user,
        status: body.status,
      });
      return problem(body.status);
    }
    const value = body.value[spec.field];
    if (typeof value !== "string" || value.trim() === "" || value.length > spec.maxLength) {
      logger.debug("Refused a {action} request of {user}: {field} is invalid.", {
        action,
        user,
        field: spec.field,
      });
      return problem(400, spec.field);
    }
    if (action === "posts") {
      const post = await app.post(user, value);
      const url = ctx().getObjectUri(Note, { identifier: user, id: post.id }).href;
      return json({ ...post, url }, 201);
    }
    // These depend on another server (a lookup, a delivery): a failure is
    // the request's, told to the client in general terms only.
    try {
      switch (action) {
        case "follow":
          return json({ following: await app.follow(user, value) }, 202);
        case "unfollow":
          await app.unfollow(user, value);
          return json({ unfollowed: value }, 202);
        default:
          await app.like(user, value);
          return json({ liked: value }, 202);
      }
    } catch (error) {
      logger.warn("The {action} of {user} failed: {error}", { action, user, error });
      return problem(422);
    }
  }

  async function other(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/" && request.method === "GET") {
      const users = await store.listUsers();
      return renderHome(
        users.map((user) => ({ name: user.name, url: ctx().getActorUri(user.name).href })),
        await store.getDigest(),
      );
    }
    const match = path.match(/^\/api\/users\/([^/]+)(?:\/([a-z]+))?$/);
    if (match != null) {
      let user: string;
      try {
        user = decodeURIComponent(match[1]);
      } catch {
        return problem(404);
      }
      return await api(request, user, match[2] ?? "");
    }
    if (path.startsWith("/api/")) return problem(404);
    return renderMessage(404, "No such page");
  }

  return async (request) => {
    try {
      return await federation.fetch(request, {
        contextData: undefined,
        onNotFound: other,
        onNotAcceptable: html,
      });
    } catch (error) {
      const { pathname } = new URL(request.url);
      logger.error("Failed to answer {method} {path}: {error}", {
        method: request.method,
        path: pathname,
        error,
      });
      return pathname.startsWith("/api/")
        ? problem(500)
        : renderMessage(500, "Something went wrong");
    }
  };
}
