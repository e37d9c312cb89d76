// The web process's Fetch handler: federation.fetch() answers ActivityPub
// (actors, inboxes, followers, notes, WebFinger, NodeInfo); a browser asking
// for the same URLs gets HTML through onNotAcceptable; everything else (the
// home page and a small JSON API to act as a user) goes through onNotFound.
import { Note } from "@fedify/vocab";
import type { Microblog } from "./federation.ts";
import { renderHome, renderMessage, renderPost, renderProfile } from "./html.ts";

/** Options for {@link createFetchHandler}. */
export interface FetchHandlerOptions {
  /**
   * The bearer token the JSON API's POSTs must carry.  Without one, anybody
   * who reaches the port can post as any user: fine on loopback only.
   */
  readonly apiToken?: string;
}

const json = (value: unknown, status = 200) => Response.json(value, { status });

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
      received: await store.listReceivedNotes(name),
      postUrl: (post) => ctx().getObjectUri(Note, { identifier: name, id: post.id }).href,
    });
  }

  async function api(request: Request, user: string, action: string): Promise<Response> {
    if (await store.getUser(user) == null) return json({ error: `No user ${user}.` }, 404);
    if (request.method === "GET" && action === "") {
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
        received: await store.listReceivedNotes(user),
      });
    }
    if (request.method !== "POST") return json({ error: "Not found." }, 404);
    if (
      options.apiToken != null &&
      request.headers.get("authorization") !== `Bearer ${options.apiToken}`
    ) {
      return json({ error: "A bearer token is required." }, 401);
    }
    let body: Record<string, unknown>;
    try {
      body = await request.json();
    } catch {
      return json({ error: "The body must be a JSON object." }, 400);
    }
    const field = (name: string) => typeof body[name] === "string" ? body[name] as string : null;
    try {
      switch (action) {
        case "posts": {
          const content = field("content");
          if (content == null) return json({ error: "content is required." }, 400);
          const post = await app.post(user, content);
          const url = ctx().getObjectUri(Note, { identifier: user, id: post.id }).href;
          return json({ ...post, url }, 201);
        }
        case "follow": {
          const target = field("target");
          if (target == null) return json({ error: "target is required." }, 400);
          return json({ following: await app.follow(user, target) }, 202);
        }
        case "unfollow": {
          const target = field("target");
          if (target == null) return json({ error: "target is required." }, 400);
          await app.unfollow(user, target);
          return json({ unfollowed: target }, 202);
        }
        case "like": {
          const object = field("object");
          if (object == null) return json({ error: "object is required." }, 400);
          await app.like(user, object);
          return json({ liked: object }, 202);
        }
      }
    } catch (error) {
      return json({ error: String(error) }, 422);
    }
    return json({ error: "Not found." }, 404);
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
    if (match != null) return api(request, decodeURIComponent(match[1]), match[2] ?? "");
    return renderMessage(404, "No such page");
  }

  return (request) =>
    federation.fetch(request, { contextData: undefined, onNotFound: other, onNotAcceptable: html });
}
