// What the HTML forms post to: signing in and out with the API token, and
// acting as a local user (`/forms/<user>/posts|follow|unfollow|like`, the
// API's actions and fields).  Every post passes three checks before it is
// read as a request of the user: it comes from the app's own origin
// (`Origin`, `Sec-Fetch-Site`), it carries the form token of the session
// its cookie names, and, on a server with an API token, that session signed
// in with it.  The answer is a redirect back to a page (303), or a page
// saying what was refused.
import { getLogger } from "@logtape/logtape";
import { ACTIONS, actionValue, API_ONLY_ACTIONS, isActionName, runAction } from "./actions.ts";
import { crossSiteFormRefusal, readFormBody, tokenMatches } from "./api-request.ts";
import type { BrowserSession, BrowserSessions } from "./browser-session.ts";
import type { Microblog } from "./federation.ts";
import { type NoticeCode, type PageViewer, renderLogin, renderMessage } from "./html.ts";

const logger = getLogger(["fedwork", "microblog", "web"]);

// A form's fields are short: the longest is a note of 5,000 characters,
// up to four bytes each when encoded.
const FORM_LIMITS = { maxBytes: 64 * 1024, timeoutMs: 10_000 };

const STATUS_TEXT = {
  400: "The form is incomplete.",
  408: "The form took too long to arrive.",
  413: "The form is too large.",
} as const;

/** What {@link createFormHandler} needs. */
export interface FormHandlerOptions {
  readonly app: Microblog;
  readonly sessions: BrowserSessions;
  /** The API token; without one, anyone may use the forms. */
  readonly apiToken?: string;
  /** The URL of a local user's profile page. */
  profileUrl(user: string): string;
}

/** A page viewer from a session. */
export function viewerOf(session: BrowserSession, apiToken: string | undefined): PageViewer {
  return {
    signedIn: session.signedIn,
    signInRequired: apiToken != null,
    formToken: session.formToken,
  };
}

/** Adds a session's cookie (when new) to a page that shows its forms, and keeps it out of caches. */
export function withSession(response: Response, session: BrowserSession): Response {
  if (session.setCookie != null) response.headers.append("Set-Cookie", session.setCookie);
  response.headers.set("Cache-Control", "no-store");
  return response;
}

const redirect = (location: URL | string, setCookie?: string) =>
  new Response(null, {
    status: 303,
    headers: {
      Location: String(location),
      "Cache-Control": "no-store",
      ...(setCookie == null ? {} : { "Set-Cookie": setCookie }),
    },
  });

/**
 * The handler of the sign-in page and of every form post.
 * @returns A handler that answers the paths it knows and `undefined` for
 *          any other.
 */
export function createFormHandler(
  options: FormHandlerOptions,
): (request: Request) => Promise<Response | undefined> {
  const { app, sessions, apiToken } = options;
  const home = new URL("/", app.origin);

  /** The checks every post passes; the session and fields, or the refusal. */
  async function accept(
    request: Request,
  ): Promise<{ session: BrowserSession; fields: URLSearchParams } | Response> {
    const path = new URL(request.url).pathname;
    const reason = crossSiteFormRefusal(request, app.origin);
    if (reason != null) {
      logger.warn("Refused a cross-site form post to {path} ({reason}).", {
        path,
        reason,
        origin: request.headers.get("origin"),
        secFetchSite: request.headers.get("sec-fetch-site"),
        contentType: request.headers.get("content-type"),
      });
      return renderMessage(403, "Refused: forms are accepted from this site's own pages only");
    }
    const session = await sessions.read(request);
    const body = await readFormBody(request, FORM_LIMITS);
    if (!body.ok) return renderMessage(body.status, STATUS_TEXT[body.status]);
    const sent = body.value.get("csrf");
    // A fresh session had no cookie: no form of ours was posted with it.
    if (session.setCookie != null || sent == null || !await tokenMatches(sent, session.formToken)) {
      logger.warn("Refused a form post to {path}: its form token is missing or wrong.", { path });
      return renderMessage(403, "This form has expired: reload the page and send it again");
    }
    return { session, fields: body.value };
  }

  async function login(request: Request): Promise<Response> {
    if (request.method === "GET" || request.method === "HEAD") {
      const session = await sessions.read(request);
      return withSession(renderLogin({ viewer: viewerOf(session, apiToken) }), session);
    }
    if (request.method !== "POST") return renderMessage(405, "Method not allowed");
    const accepted = await accept(request);
    if (accepted instanceof Response) return accepted;
    const { session, fields } = accepted;
    if (apiToken == null) return renderMessage(404, "This server has no API token to sign in with");
    const token = fields.get("token") ?? "";
    if (!await tokenMatches(token, apiToken)) {
      logger.info("A sign-in with a wrong API token was refused.");
      return withSession(
        renderLogin(
          { viewer: viewerOf(session, apiToken), error: "That is not this server's API token." },
          401,
        ),
        session,
      );
    }
    return redirect(home, await sessions.signIn());
  }

  async function logout(request: Request): Promise<Response> {
    if (request.method !== "POST") return renderMessage(405, "Method not allowed");
    const accepted = await accept(request);
    if (accepted instanceof Response) return accepted;
    return redirect(home, sessions.signOut());
  }

  async function act(request: Request, user: string, action: string): Promise<Response> {
    if (request.method !== "POST") return renderMessage(405, "Method not allowed");
    const accepted = await accept(request);
    if (accepted instanceof Response) return accepted;
    if (apiToken != null && !accepted.session.signedIn) {
      return renderMessage(401, "Sign in with the API token first");
    }
    if (
      !isActionName(action) || API_ONLY_ACTIONS.has(action) ||
      await app.store.getUser(user) == null
    ) {
      return renderMessage(404, "No such form");
    }
    const value = actionValue(action, accepted.fields.get(ACTIONS[action].field));
    if (value == null) return renderMessage(400, STATUS_TEXT[400]);
    let notice: NoticeCode;
    try {
      const result = await runAction(app, user, action, value);
      notice = result.action === "posts"
        ? "posted"
        : result.action === "follow"
        ? "followed"
        : result.action === "unfollow"
        ? "unfollowed"
        : "liked";
    } catch (error) {
      if (action === "posts") throw error;
      logger.warn("The {action} of {user} failed: {error}", { action, user, error });
      notice = "failed";
    }
    const back = new URL(options.profileUrl(user));
    back.searchParams.set("notice", notice);
    return redirect(back);
  }

  return async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/login") return await login(request);
    if (path === "/logout") return await logout(request);
    const match = path.match(/^\/forms\/([^/]+)\/([a-z]+)$/);
    if (match == null) return undefined;
    let user: string;
    try {
      user = decodeURIComponent(match[1]);
    } catch {
      return renderMessage(404, "No such form");
    }
    return await act(request, user, match[2]);
  };
}
