import { assert, assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { Collection, Create, Hashtag, Like, Note, OrderedCollection, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import {
  DuplicateRegistrationError,
  RouteNotRegisteredError,
  RoutePathError,
} from "../../federation/errors.ts";
import { createFederationBuilder } from "../../federation/builder.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { RequestContext } from "../../federation/context-api.ts";
import { serveFederation } from "../../federation/testdata/test-support.ts";

const JSON_LD = { Accept: "application/activity+json" };
const BOOKMARKS = Symbol("bookmarks");

// Notes by tag: "fedi" has five (pages of two, cursors are offsets),
// "empty" none; any other tag has no collection (404).
const tagged = [1, 2, 3, 4, 5].map((i) => `note-${i}`);

function createApp(): Federation<void> {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher("/users/{identifier}", (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      inbox: ctx.getInboxUri(identifier),
      featured: ctx.getFeaturedUri(identifier),
      featuredTags: ctx.getFeaturedTagsUri(identifier),
      liked: ctx.getLikedUri(identifier),
    }));
  federation.setObjectDispatcher(
    Note,
    "/users/{identifier}/notes/{id}",
    (ctx, values) => new Note({ id: ctx.getObjectUri(Note, values) }),
  );
  federation
    .setOrderedCollectionDispatcher(
      "tagged",
      Note,
      "/users/{identifier}/tags/{tag}",
      (ctx, values, cursor) => {
        if (values.tag === "empty") return { items: [] };
        if (values.tag !== "fedi") return null;
        if (cursor == null) return null;
        const start = Number(cursor);
        return {
          items: tagged.slice(start, start + 2).map((id) =>
            ctx.getObjectUri(Note, { identifier: values.identifier, id })
          ),
          nextCursor: start + 2 < tagged.length ? String(start + 2) : null,
          prevCursor: start > 0 ? String(start - 2) : null,
        };
      },
    )
    .setCounter((_ctx, values) => values.tag === "fedi" ? tagged.length : null)
    .setFirstCursor((_ctx, values) => values.tag === "fedi" ? "0" : null)
    .setLastCursor((_ctx, values) => values.tag === "fedi" ? "4" : null)
    .authorize((_ctx, values) => values.identifier !== "private");
  federation.setCollectionDispatcher(
    BOOKMARKS,
    Note,
    "/users/{identifier}/bookmarks",
    (ctx, values) => ({
      items: [new Note({ id: ctx.getObjectUri(Note, { identifier: values.identifier, id: "b" }) })],
    }),
  );
  federation.setFeaturedDispatcher(
    "/users/{identifier}/featured",
    (ctx, identifier) =>
      identifier === "nobody" ? null : {
        items: [new Note({ id: ctx.getObjectUri(Note, { identifier, id: "pinned" }) })],
      },
  );
  federation.setFeaturedTagsDispatcher("/users/{identifier}/tags", () => ({
    items: [new Hashtag({ name: "#fedi", href: new URL("https://example.com/tags/fedi") })],
  }));
  federation.setLikedDispatcher("/users/{identifier}/liked", () => ({
    items: [new URL("https://remote.example/notes/1")],
  })).authorize(async (ctx) => (await ctx.getSignedKey()) != null);
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setInboxDispatcher("/users/{identifier}/inbox", (_ctx, identifier) => ({
    items: [
      new Create({
        id: new URL("https://remote.example/creates/1"),
        actor: new URL("https://remote.example/users/bob"),
        object: new URL(`https://remote.example/to/${identifier}`),
      }),
    ],
  })).setCounter(() => 1);
  return federation;
}

const app = createApp();

async function getJson(base: URL, path: string): Promise<Record<string, unknown>> {
  const response = await fetch(new URL(path, base), { headers: JSON_LD });
  assertEquals(response.status, 200, `GET ${path}`);
  assertEquals(response.headers.get("content-type"), "application/activity+json");
  return await response.json();
}

test("a custom ordered collection with two template variables is served with its pages", async () => {
  await using server = await serveFederation(app, undefined);
  const base = server.url;
  const collection = await getJson(base, "/users/alice/tags/fedi");
  assertEquals(collection.type, "OrderedCollection");
  assertEquals(collection.id, new URL("/users/alice/tags/fedi", base).href);
  assertEquals(collection.totalItems, 5);
  assertEquals(collection.first, new URL("/users/alice/tags/fedi?cursor=0", base).href);
  assertEquals(collection.last, new URL("/users/alice/tags/fedi?cursor=4", base).href);
  const page = await getJson(base, "/users/alice/tags/fedi?cursor=2");
  assertEquals(page.type, "OrderedCollectionPage");
  assertEquals(page.partOf, new URL("/users/alice/tags/fedi", base).href);
  assertEquals(page.orderedItems, [
    new URL("/users/alice/notes/note-3", base).href,
    new URL("/users/alice/notes/note-4", base).href,
  ]);
  assertEquals(page.next, new URL("/users/alice/tags/fedi?cursor=4", base).href);
  assertEquals(page.prev, new URL("/users/alice/tags/fedi?cursor=0", base).href);
  const empty = await getJson(base, "/users/alice/tags/empty");
  assertEquals([empty.type, empty.totalItems, empty.orderedItems], [
    "OrderedCollection",
    0,
    undefined,
  ]);
});

test("a custom collection answers 404 when its dispatcher returns null, 401 when authorize refuses", async () => {
  await using server = await serveFederation(app, undefined);
  const get = (path: string) => fetch(new URL(path, server.url), { headers: JSON_LD });
  const missing = await get("/users/alice/tags/unknown");
  assertEquals(missing.status, 404);
  await missing.body?.cancel();
  const refused = await get("/users/private/tags/fedi");
  assertEquals(refused.status, 401);
  await refused.body?.cancel();
  const browser = await fetch(new URL("/users/alice/tags/fedi", server.url), {
    headers: { Accept: "text/html" },
  });
  assertEquals(browser.status, 406);
  await browser.body?.cancel();
});

test("setCollectionDispatcher() serves an unordered Collection, named by a symbol", async () => {
  await using server = await serveFederation(app, undefined);
  const collection = await getJson(server.url, "/users/alice/bookmarks");
  assertEquals(collection.type, "Collection");
  assertEquals(collection.totalItems, 1);
  const parsed = await Collection.fromJsonLd(collection);
  const items = [];
  for await (const item of parsed.getItems()) items.push(item);
  assertEquals(items.map((item) => item.id?.href), [
    new URL("/users/alice/notes/b", server.url).href,
  ]);
  const ctx = app.createContext(server.url, undefined);
  assertEquals(
    ctx.getCollectionUri(BOOKMARKS, { identifier: "alice" }).href,
    new URL("/users/alice/bookmarks", server.url).href,
  );
});

test("featured, featured tags and liked collections are served at their routes", async () => {
  await using server = await serveFederation(app, undefined);
  const featured = await getJson(server.url, "/users/alice/featured");
  assertEquals(featured.type, "OrderedCollection");
  assertEquals(
    (featured.orderedItems as { id: string }[])[0].id,
    new URL("/users/alice/notes/pinned", server.url).href,
  );
  const notFound = await fetch(new URL("/users/nobody/featured", server.url), { headers: JSON_LD });
  assertEquals(notFound.status, 404);
  await notFound.body?.cancel();
  const tags = await getJson(server.url, "/users/alice/tags");
  assertEquals((tags.orderedItems as { name: string }[]).map((tag) => tag.name), ["#fedi"]);
  const liked = await fetch(new URL("/users/alice/liked", server.url), { headers: JSON_LD });
  assertEquals(liked.status, 401, "liked's authorize() refuses unsigned requests");
  await liked.body?.cancel();
  const actor = await getJson(server.url, "/users/alice");
  assertEquals(actor.featured, new URL("/users/alice/featured", server.url).href);
  assertEquals(actor.featuredTags, new URL("/users/alice/tags", server.url).href);
  assertEquals(actor.liked, new URL("/users/alice/liked", server.url).href);
});

test("the inbox collection is served on GET at the inbox path, which still takes POSTs", async () => {
  await using server = await serveFederation(app, undefined);
  const inbox = await getJson(server.url, "/users/alice/inbox");
  assertEquals(inbox.type, "OrderedCollection");
  assertEquals(inbox.totalItems, 1);
  assertEquals(
    (inbox.orderedItems as { object: string }[])[0].object,
    "https://remote.example/to/alice",
  );
  const post = await fetch(new URL("/users/alice/inbox", server.url), {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body: JSON.stringify({ type: "Like" }),
  });
  assert(post.status !== 405, "POST still reaches the inbox listeners");
  await post.body?.cancel();
});

test("parseUri() and the URI builders know every collection", () => {
  const ctx = app.createContext(new URL("https://example.com/"), undefined);
  assertEquals(ctx.getLikedUri("alice").href, "https://example.com/users/alice/liked");
  assertEquals(ctx.getFeaturedUri("alice").href, "https://example.com/users/alice/featured");
  assertEquals(ctx.getFeaturedTagsUri("alice").href, "https://example.com/users/alice/tags");
  assertEquals(
    ctx.getCollectionUri("tagged", { identifier: "a b", tag: "fedi" }).href,
    "https://example.com/users/a%20b/tags/fedi",
  );
  assertEquals(ctx.parseUri(new URL("https://example.com/users/alice/liked")), {
    type: "liked",
    identifier: "alice",
  });
  assertEquals(ctx.parseUri(new URL("https://example.com/users/alice/tags")), {
    type: "featuredTags",
    identifier: "alice",
  });
  const parsed = ctx.parseUri(new URL("https://example.com/users/alice/tags/fedi"));
  assertEquals(parsed?.type, "orderedCollection");
  assert(parsed?.type === "orderedCollection");
  assertEquals([parsed.name, parsed.class, parsed.values], [
    "tagged",
    Note,
    { identifier: "alice", tag: "fedi" },
  ]);
  const bookmarks = ctx.parseUri(new URL("https://example.com/users/alice/bookmarks"));
  assert(bookmarks?.type === "collection");
  assertEquals(bookmarks.name, BOOKMARKS);
  assertThrows(() => ctx.getCollectionUri("nope", {}), RouteNotRegisteredError, "nope");
  assertThrows(() => ctx.getCollectionUri("tagged", { identifier: "alice" }), TypeError, "tag");
});

test("a collection name registered twice is refused, naming it", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setCollectionDispatcher("tagged", Note, "/tags/{tag}", () => null);
  assertThrows(
    () => federation.setOrderedCollectionDispatcher("tagged", Note, "/other/{tag}", () => null),
    DuplicateRegistrationError,
    '"tagged"',
  );
  assertThrows(
    () => federation.setCollectionDispatcher("plain", Note, "/plain", () => null),
    RoutePathError,
    "variable",
  );
  assertThrows(
    () => federation.setCollectionDispatcher("like", Like as never, "/likes/{id}", "x" as never),
    TypeError,
    "must be a function",
  );
  federation.setFeaturedDispatcher("/users/{identifier}/featured", () => null);
  assertThrows(
    () => federation.setFeaturedDispatcher("/u/{identifier}/featured", () => null),
    DuplicateRegistrationError,
  );
});

test("the inbox dispatcher's path must be the inbox listeners' path", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setInboxListeners("/users/{identifier}/inbox");
  assertThrows(
    () => federation.setInboxDispatcher("/u/{identifier}/inbox", () => null),
    RoutePathError,
    "/users/{identifier}/inbox",
  );
  const reversed = createFederation<void>({ kv: new MemoryKvStore() });
  reversed.setInboxDispatcher("/users/{identifier}/inbox", () => null);
  assertThrows(
    () => reversed.setInboxListeners("/u/{identifier}/inbox"),
    RoutePathError,
    "/users/{identifier}/inbox",
  );
  const post = await reversed.fetch(
    new Request("https://example.com/users/alice/inbox", { method: "POST", body: "{}" }),
    { contextData: undefined },
  );
  assertEquals([post.status, post.headers.get("allow")], [405, "GET, HEAD"]);
  reversed.setInboxListeners("/users/{identifier}/inbox", "/inbox");
});

test("a builder's custom collections reach each federation it builds, and no further", async () => {
  const builder = createFederationBuilder<void>();
  builder.setCollectionDispatcher("tagged", Note, "/tags/{tag}", () => ({ items: [] }));
  const first = await builder.build({ kv: new MemoryKvStore() });
  first.setOrderedCollectionDispatcher("only-first", Note, "/only/{id}", () => null);
  const second = await builder.build({ kv: new MemoryKvStore() });
  const base = new URL("https://example.com/");
  for (const federation of [first, second]) {
    const ctx = federation.createContext(base, undefined);
    assertEquals(ctx.getCollectionUri("tagged", { tag: "a" }).href, "https://example.com/tags/a");
    const response = await federation.fetch(
      new Request("https://example.com/tags/a", { headers: JSON_LD }),
      { contextData: undefined },
    );
    assertEquals((await response.json()).type, "Collection");
  }
  assertThrows(
    () => second.createContext(base, undefined).getCollectionUri("only-first", { id: "1" }),
    RouteNotRegisteredError,
  );
  second.setOrderedCollectionDispatcher("only-first", Note, "/only/{id}", () => null);
});

test("ctx.traverseCollection() walks a collection served by a real Fedwork server", async () => {
  await using server = await serveFederation(app, undefined);
  const remote = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  const ctx = remote.createContext(new URL("https://local.example/"), undefined);
  const collection = await ctx.lookupObject(new URL("/users/alice/tags/fedi", server.url));
  assert(collection instanceof OrderedCollection, "the collection is found");
  const ids: string[] = [];
  for await (const item of ctx.traverseCollection(collection)) {
    ids.push(new URL(item.id!).pathname);
  }
  assertEquals(ids, tagged.map((id) => `/users/alice/notes/${id}`));
  await assertRejects(
    async () => {
      for await (const _ of ctx.traverseCollection(collection, { maxPages: 2 })) { /* nothing */ }
    },
    Error,
    "more than 2 pages",
  );
});

// Type-level checks: the `@ts-expect-error` lines fail `tsc` and `deno
// check` if they ever stop being errors.  Never called.
function typeChecks(federation: Federation<{ readonly db: string }>): void {
  // A Fedify app's callbacks, annotated with Fedify's context types, fit.
  federation.setOutboxDispatcher(
    "/users/{identifier}/outbox",
    (ctx: RequestContext<{ readonly db: string }>, identifier: string, cursor: string | null) => {
      void ctx.request;
      return { items: [], nextCursor: cursor == null ? identifier : null };
    },
  );
  federation.setOrderedCollectionDispatcher(
    "tagged",
    Note,
    "/tags/{tag}",
    (ctx, values, cursor) => {
      const tag: string = values.tag;
      void ctx.request;
      return { items: [new Note({ content: tag })], nextCursor: cursor };
    },
  ).setCounter((_ctx, values) => values.tag.length)
    // @ts-expect-error: a cursor is a string or null.
    .setFirstCursor(() => 0);
  // @ts-expect-error: the name is a string or a symbol.
  federation.setCollectionDispatcher(1, Note, "/n/{id}", () => null);
  // @ts-expect-error: the featured tags are Hashtags.
  federation.setFeaturedTagsDispatcher("/u/{identifier}/tags", () => ({ items: ["fedi"] }));
  const ctx = federation.createContext(new URL("https://example.com/"), { db: "" });
  const parsed = ctx.parseUri(new URL("https://example.com/tags/fedi"));
  if (parsed?.type === "orderedCollection") {
    const name: string | symbol = parsed.name;
    void name;
  }
}
void typeChecks;
