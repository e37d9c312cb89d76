import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import { Create, Note, Person, Tombstone } from "@fedify/vocab";
import { RouteConflictError } from "./errors.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import { serveFederation, testKeyPair } from "../../federation/testdata/test-support.ts";

const JSON_LD = { Accept: "application/activity+json" };

function createApp(): Federation<{ db: string }> {
  const federation = createFederation<{ db: string }>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier === "gone") {
      return new Tombstone({ id: ctx.getActorUri(identifier) });
    }
    if (identifier !== "alice" && identifier !== "user-1") return null;
    const keys = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier === "user-1" ? "carol" : identifier,
      name: ctx.data.db,
      inbox: ctx.getInboxUri(identifier),
      followers: ctx.getFollowersUri(identifier),
      url: new URL(`/@${identifier}`, ctx.canonicalOrigin),
      publicKey: keys[0].cryptographicKey,
      assertionMethods: keys.map((key) => key.multikey),
    });
  })
    .setKeyPairsDispatcher(async () => [await testKeyPair()])
    .mapHandle((_ctx, username) => username === "carol" ? "user-1" : username);
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setObjectDispatcher(
    Note,
    "/users/{identifier}/notes/{id}",
    (ctx, values) =>
      values.id === "missing" ? null : new Note({
        id: ctx.getObjectUri(Note, values),
        attribution: ctx.getActorUri(values.identifier),
        content: `note ${values.id}`,
      }),
  ).authorize((_ctx, values) => values.id !== "secret");
  // Followers: a paged collection of 5 (pages of 2, cursors are offsets).
  const followers = [1, 2, 3, 4, 5].map((i) => ({
    id: new URL(`https://remote.example/users/${i}`),
    inboxId: new URL(`https://remote.example/users/${i}/inbox`),
  }));
  federation.setFollowersDispatcher("/users/{identifier}/followers", (_ctx, _id, cursor) => {
    if (cursor == null) return null;
    const start = Number(cursor);
    return {
      items: followers.slice(start, start + 2),
      nextCursor: start + 2 < followers.length ? String(start + 2) : null,
      prevCursor: start > 0 ? String(start - 2) : null,
    };
  })
    .setCounter(() => followers.length)
    .setFirstCursor(() => "0")
    .setLastCursor(() => "4");
  federation.setOutboxDispatcher("/users/{identifier}/outbox", (ctx, identifier) => ({
    items: [
      new Create({
        id: new URL("/creates/1", ctx.canonicalOrigin),
        actor: ctx.getActorUri(identifier),
      }),
    ],
  })).authorize(async (ctx) => (await ctx.getSignedKey()) != null);
  federation.setNodeInfoDispatcher("/nodeinfo/2.1", () => ({
    software: { name: "fedwork-test", version: "0.2.0" },
    protocols: ["activitypub"],
    openRegistrations: false,
    usage: { users: { total: 2 } },
  }));
  federation.setWebFingerLinksDispatcher(() => [
    { rel: "http://ostatus.org/schema/1.0/subscribe", template: "https://example.com/{uri}" },
  ]);
  return federation;
}

const app = createApp();
const get = (path: string, headers: Record<string, string> = JSON_LD) =>
  app.fetch(new Request(new URL(path, "https://example.com"), { headers }), {
    contextData: { db: "main" },
  });

test("an actor is served as activity+json with Vary: Accept to JSON-LD requests", async () => {
  for (
    const accept of [
      "application/activity+json",
      'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
      "application/json",
    ]
  ) {
    const response = await get("/users/alice", { Accept: accept });
    assertEquals(response.status, 200);
    assertEquals(response.headers.get("content-type"), "application/activity+json");
    assert(response.headers.get("vary")?.includes("Accept"), "Vary: Accept");
    const actor = await Person.fromJsonLd(await response.json());
    assertEquals(actor.id?.href, "https://example.com/users/alice");
    assertEquals(actor.name?.toString(), "main");
    assertEquals(actor.inboxId?.href, "https://example.com/users/alice/inbox");
    assertEquals(
      (await actor.getPublicKey())?.id?.href,
      "https://example.com/users/alice#main-key",
    );
  }
});

test("a browser gets onNotAcceptable (406 by default), so the app can serve HTML", async () => {
  const response = await get("/users/alice", { Accept: "text/html,application/xhtml+xml" });
  assertEquals(response.status, 406);
  assertEquals(response.headers.get("vary"), "Accept");
  const html = await app.fetch(new Request("https://example.com/users/alice"), {
    contextData: { db: "main" },
    onNotAcceptable: () => new Response("<h1>alice</h1>", { status: 200 }),
  });
  assertEquals(await html.text(), "<h1>alice</h1>");
});

test("a Tombstone is served as 410 Gone; an unknown actor and path go to onNotFound", async () => {
  const gone = await get("/users/gone");
  assertEquals(gone.status, 410);
  assertEquals((await gone.json()).type, "Tombstone");
  assertEquals((await get("/users/nobody")).status, 404);
  const fallback = await app.fetch(new Request("https://example.com/about"), {
    contextData: { db: "main" },
    onNotFound: () => new Response("the app's page"),
  });
  assertEquals(await fallback.text(), "the app's page");
  const post = await app.fetch(new Request("https://example.com/users/alice", { method: "POST" }), {
    contextData: { db: "main" },
  });
  assertEquals(post.status, 405);
});

test("objects are served at their routes, built by getObjectUri() and parsed back by parseUri()", async () => {
  const response = await get("/users/alice/notes/42");
  assertEquals(response.status, 200);
  const note = await Note.fromJsonLd(await response.json());
  assertEquals(note.id?.href, "https://example.com/users/alice/notes/42");
  assertEquals(note.content?.toString(), "note 42");
  assertEquals((await get("/users/alice/notes/missing")).status, 404);
  assertEquals((await get("/users/alice/notes/secret")).status, 401);
  const ctx = app.createContext(new URL("https://example.com/"), { db: "main" });
  const parsed = ctx.parseUri(new URL("https://example.com/users/a%20b/notes/1"));
  assertEquals(parsed?.type === "object" && parsed.values, { identifier: "a b", id: "1" });
  assertEquals(ctx.parseUri(new URL("https://example.com/users/bob")), {
    type: "actor",
    identifier: "bob",
  });
  assertEquals(ctx.parseUri(new URL("https://other.example/users/bob")), null);
});

test("WebFinger resolves acct: handles through mapHandle and actor URIs", async () => {
  const byHandle = await get("/.well-known/webfinger?resource=acct:carol@example.com", {});
  assertEquals(byHandle.headers.get("content-type"), "application/jrd+json");
  assertEquals(byHandle.headers.get("access-control-allow-origin"), "*");
  const jrd = await byHandle.json();
  assertEquals(jrd.subject, "acct:carol@example.com");
  assertEquals(jrd.links[0], {
    rel: "self",
    type: "application/activity+json",
    href: "https://example.com/users/user-1",
  });
  assertEquals(jrd.links.map((link: { rel: string }) => link.rel), [
    "self",
    "http://webfinger.net/rel/profile-page",
    "http://ostatus.org/schema/1.0/subscribe",
  ]);
  const byUri = await get(
    "/.well-known/webfinger?resource=https://example.com/users/alice",
    {},
  );
  assertEquals((await byUri.json()).subject, "acct:alice@example.com");
  const unknown = await get("/.well-known/webfinger?resource=acct:nobody@example.com", {});
  assertEquals(unknown.status, 404);
});

test("NodeInfo is discovered at /.well-known/nodeinfo and served at its path", async () => {
  const wellKnown = await (await get("/.well-known/nodeinfo", {})).json();
  assertEquals(wellKnown.links[0].href, "https://example.com/nodeinfo/2.1");
  const nodeInfo = await (await get("/nodeinfo/2.1", {})).json();
  assertEquals([nodeInfo.version, nodeInfo.software.name, nodeInfo.usage.users.total], [
    "2.1",
    "fedwork-test",
    2,
  ]);
});

test("a paged collection links to its first and last pages; pages link to each other", async () => {
  const collection = await (await get("/users/alice/followers")).json();
  assertEquals(collection.type, "OrderedCollection");
  assertEquals(collection.totalItems, 5);
  assertEquals(collection.first, "https://example.com/users/alice/followers?cursor=0");
  assertEquals(collection.last, "https://example.com/users/alice/followers?cursor=4");
  assertEquals(collection.orderedItems, undefined);
  const page = await (await get("/users/alice/followers?cursor=2")).json();
  assertEquals(page.type, "OrderedCollectionPage");
  assertEquals(page.partOf, "https://example.com/users/alice/followers");
  assertEquals(page.orderedItems, [
    "https://remote.example/users/3",
    "https://remote.example/users/4",
  ]);
  assertEquals(page.next, "https://example.com/users/alice/followers?cursor=4");
  assertEquals(page.prev, "https://example.com/users/alice/followers?cursor=0");
});

test("a collection whose authorize() refuses the request gets 401", async () => {
  assertEquals((await get("/users/alice/outbox")).status, 401);
});

test("a route that could match another's path is refused at registration", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher("/users/{identifier}", () => null);
  assertThrows(
    () => federation.setObjectDispatcher(Note, "/users/{id}", () => null),
    RouteConflictError,
    "ambiguous",
  );
});

test("fetch() serves a real HTTP server on loopback", async () => {
  await using server = await serveFederation(app, { db: "served" });
  const response = await fetch(new URL("/users/alice", server.url), { headers: JSON_LD });
  const actor = await response.json();
  assertEquals(actor.id, new URL("/users/alice", server.url).href);
  assertEquals(actor.name, "served");
});
