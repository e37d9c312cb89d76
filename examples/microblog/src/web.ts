// The web process's Fetch handler: federation.fetch() answers ActivityPub
// (actors, inboxes, followers, notes, WebFinger, NodeInfo); a browser asking
// for the same URLs gets HTML through onNotAcceptable; everything else (the
// home page, the sign-in page, the forms' posts and a small JSON API to act
// as a user) goes through onNotFound.
//
// What anyone may see: public and unlisted notes only.  Followers-only and
// direct notes a user received are in the API's answer only to a request
// carrying the API token, and on the pages only to the browser that signed
// in with it (forms.ts, browser-session.ts).
import { Note } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { bearerToken, crossSiteRefusal, readJsonObject, tokenMatches } from "./api-request.ts";
import { type ActionResult, ACTIONS, actionValue, isActionName, runAction } from "./actions.ts";
import type { Microblog } from "./federation.ts";
import { BrowserSessions } from "./browser-session.ts";
import { createFormHandler, viewerOf, withSession } from "./forms.ts";
import { mayAct, NOTICES, renderHome, renderMessage, renderPost, renderProfile } from "./html.ts";
import type { Audience } from "./visibility.ts";

const logger = getLogger(["fedwork", "microblog", "web"]);

/** Options for {@link createFetchHandler}. */
export interface FetchHandlerOptions {
  /**
   * The bearer token the JSON API's POSTs must carry, and that lets a GET
   * see followers-only and direct notes; a browser signs in with it at
   * `/login` to use the forms (and to see those notes on the pages).
   * Without one, anybody who reaches the port can post as any user through
   * the API and the forms (fine on loopback only; a warning says so when
   * the handler is made), and nobody sees those notes.  Either way,
   * cross-site requests from a browser are refused.
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

// An action's body is one short field: anything larger is not ours.
const BODY_LIMITS = { maxBytes: 64 * 1024, timeoutMs: 10_000 };

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The whole web app as a Fetch API handler.
 * @throws {TypeError} When `apiToken` is blank.
 */
export function createFetchHandler(
  app: Microblog,
  options: FetchHandlerOptions = {},
): (request: Request) => Promise<Response> {
  const { federation, store } = app;
  const ctx = () => federation.createContext(app.origin, undefined);
  const handle = (user: string) => `@${user}@${app.origin.host}`;
  const { apiToken } = options;
  // An empty API_TOKEN= would otherwise be a password anyone can type.
  if (apiToken != null && (typeof apiToken !== "string" || apiToken.trim() === "")) {
    throw new TypeError(
      "The apiToken option (API_TOKEN) must be a non-blank secret; unset it to run without one.",
    );
  }
  const sessions = new BrowserSessions(app.origin, apiToken);
  const forms = createFormHandler({
    app,
    sessions,
    apiToken,
    profileUrl: (user) => ctx().getActorUri(user).href,
  });
  if (apiToken == null) {
    logger.warn(
      "API_TOKEN is not set: anyone who can reach {origin} can post, follow and like as any of " +
        "its users, through the JSON API and the HTML forms, without signing in.  Fine on a " +
        "machine of your own; before anyone else can reach the port, set API_TOKEN to a long " +
        "random secret (e.g. `openssl rand -hex 32`), send it as `Authorization: Bearer` to the " +
        "API, and sign in to the forms at {login}.",
      { origin: app.origin.origin, login: new URL("/login", app.origin).href },
    );
  }

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
    const session = await sessions.read(request);
    const viewer = viewerOf(session, apiToken);
    const notice = new URL(request.url).searchParams.get("notice");
    const page = renderProfile({
      name,
      handle: handle(name),
      posts: await store.listPosts(name),
      followers: await store.listFollowers(name),
      following: await store.listFollowing(name),
      // Followers-only and direct notes for the browser signed in with
      // the API token only, as in the API.
      received: await store.listReceivedNotes(name, session.signedIn ? "owner" : "anyone"),
      postUrl: (post) => ctx().getObjectUri(Note, { identifier: name, id: post.id }).href,
      viewer,
      ...(notice != null && Object.hasOwn(NOTICES, notice)
        ? { notice: notice as keyof typeof NOTICES }
        : {}),
    });
    return mayAct(viewer) ? withSession(page, session) : page;
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
    if (!isActionName(action)) return problem(404);
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
    const { field } = ACTIONS[action];
    const value = actionValue(action, body.value[field]);
    if (value == null) {
      logger.debug("Refused a {action} request of {user}: {field} is invalid.", {
        action,
        user,
        field,
      });
      return problem(400, field);
    }
    // Follow, unfollow and like depend on another server (a lookup, a
    // delivery): a failure is the request's, told to the client in general
    // terms only.
    let result: ActionResult;
    try {
      result = await runAction(app, user, action, value);
    } catch (error) {
      // A post is this server's own business: its failure is a 500.
      if (action === "posts") throw error;
      logger.warn("The {action} of {user} failed: {error}", { action, user, error });
      return problem(422);
    }
    switch (result.action) {
      case "posts":
        return json(result.post, 201);
      case "follow":
        return json({ following: result.following }, 202);
      case "unfollow":
        return json({ unfollowed: result.unfollowed }, 202);
      case "like":
        return json({ liked: result.liked }, 202);
      case "import-follows":
        return json({ importing: result.importing }, 202);
    }
  }

  async function other(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/" && request.method === "GET") {
      const users = await store.listUsers();
      const session = await sessions.read(request);
      return withSession(
        renderHome(
          users.map((user) => ({ name: user.name, url: ctx().getActorUri(user.name).href })),
          await store.getDigest(),
          viewerOf(session, apiToken),
        ),
        session,
      );
    }
    const answered = await forms(request);
    if (answered != null) return answered;
    const match = path.match(/^\/api\/users\/([^/]+)(?:\/([a-z-]+))?$/);
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
