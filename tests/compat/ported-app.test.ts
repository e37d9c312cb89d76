// A Fedify 2.3 app ported to Fedwork by changing its imports only
// (testdata/ported-app/): its Fedwork build, served by Express through
// @fedwork/express, answers WebFinger, its actors, NodeInfo and its
// collections as its Fedify build does, and federates with that build over
// loopback HTTP (follow, accept, a note to followers, unfollow) in both
// signature specs.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { readFile } from "node:fs/promises";
import {
  assert,
  assertEquals,
  startTestServer,
  test,
  type TestServer,
  waitUntil,
} from "@fedify/fixture";
import { integrateFederation } from "@fedwork/express";
import { Accept, Create, Undo } from "@fedify/vocab";
import express from "express";
import {
  createMicroblog as createOnFedify,
  type Microblog as FedifyMicroblog,
} from "./testdata/ported-app/federation.ts";
import {
  createMicroblog as createOnFedwork,
  type Microblog as FedworkMicroblog,
} from "./testdata/ported-app/federation.fedwork.ts";
import { port, PORTED, SOURCE } from "./testdata/ported-app/port.ts";

type Spec = "rfc9421" | "draft-cavage-http-signatures-12";
const SPECS: Spec[] = ["rfc9421", "draft-cavage-http-signatures-12"];

/** One POST a server received: its path, signature spec and status. */
interface Post {
  readonly path: string;
  readonly spec: Spec | null;
  readonly status: number;
}

function specOf(headers: { has(name: string): boolean }): Spec | null {
  if (headers.has("signature-input")) return "rfc9421";
  if (headers.has("signature")) return "draft-cavage-http-signatures-12";
  return null;
}

/** The Fedwork build, served by Express through @fedwork/express. */
async function serveFedwork(spec: Spec) {
  const app = createOnFedwork({ firstKnock: spec });
  const posts: Post[] = [];
  const server = express();
  server.use((req, res, next) => {
    if (req.method === "POST") {
      const headers = new Headers(req.headers as Record<string, string>);
      res.on(
        "finish",
        () => posts.push({ path: req.path, spec: specOf(headers), status: res.statusCode }),
      );
    }
    next();
  });
  server.use(integrateFederation(app.federation, () => undefined));
  const http = server.listen(0, "127.0.0.1");
  await once(http, "listening");
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`);
  return {
    app,
    url,
    posts,
    async [Symbol.asyncDispose]() {
      await app[Symbol.asyncDispose]();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The Fedify build, served through its own `federation.fetch()`. */
async function serveFedify(spec: Spec) {
  const app: FedifyMicroblog = createOnFedify({ firstKnock: spec });
  const server: TestServer = await startTestServer((request) =>
    app.federation.fetch(request, { contextData: undefined })
  );
  return {
    app,
    url: server.url,
    /** The signature specs of the POSTs it received. */
    postSpecs: () =>
      server.requests.filter((r) => r.method === "POST").map((r) => specOf(r.headers)),
    async [Symbol.asyncDispose]() {
      await app[Symbol.asyncDispose]();
      await server.close();
    },
  };
}

async function getJson(url: URL, accept = "application/activity+json"): Promise<
  Record<string, unknown>
> {
  const response = await fetch(url, { headers: { accept } });
  assertEquals(response.status, 200, `GET ${url.href}`);
  return await response.json() as Record<string, unknown>;
}

function received<T>(app: FedworkMicroblog | FedifyMicroblog, type: new (...args: never[]) => T) {
  return app.received.filter((activity): activity is typeof activity & T =>
    activity instanceof type
  );
}

test("the ported app's Fedwork build is its Fedify source with only its imports changed", async () => {
  const source = await readFile(SOURCE, "utf8");
  const ported = await readFile(PORTED, "utf8");
  assertEquals(
    ported,
    port(source),
    "federation.fedwork.ts is stale: run node tests/compat/testdata/ported-app/port.ts",
  );
  const changed = source.split("\n").filter((line, i) => line !== ported.split("\n")[i]);
  assertEquals(changed, ['} from "@fedify/fedify";']);
});

test("the ported app serves WebFinger, actors, NodeInfo and its collections from Express", async () => {
  await using fedwork = await serveFedwork("rfc9421");
  const host = fedwork.url.host;
  const webFinger = await getJson(
    new URL(`/.well-known/webfinger?resource=acct:alice@${host}`, fedwork.url),
    "application/jrd+json",
  );
  const actorUrl = new URL("/users/alice", fedwork.url).href;
  assertEquals(webFinger.subject, `acct:alice@${host}`);
  assert(
    (webFinger.links as { rel: string; href: string }[]).some((link) =>
      link.rel === "self" && link.href === actorUrl
    ),
  );

  const actor = await getJson(new URL(actorUrl));
  assertEquals(actor.id, actorUrl);
  assertEquals(actor.type, "Person");
  assertEquals((actor.publicKey as { id: string }).id.startsWith(actorUrl), true);
  // The RSA key and the Ed25519 key, both as Multikeys.
  assertEquals((actor.assertionMethod as unknown[]).length, 2);
  assertEquals((actor.endpoints as { sharedInbox: string }).sharedInbox, `${fedwork.url}inbox`);

  const links = await getJson(new URL("/.well-known/nodeinfo", fedwork.url), "application/json");
  const nodeInfoUrl = (links.links as { href: string }[])[0].href;
  const nodeInfo = await getJson(new URL(nodeInfoUrl), "application/json");
  assertEquals(nodeInfo.software, {
    name: "ported-microblog",
    version: "1.0.0",
  });
  assertEquals((nodeInfo.usage as { users: { total: number } }).users.total, 2);

  const followers = await getJson(new URL("/users/alice/followers", fedwork.url));
  assertEquals(followers.totalItems, 0);
  const note = await fedwork.app.post(fedwork.url, "alice", "Hello, world");
  const outbox = await getJson(new URL("/users/alice/outbox", fedwork.url));
  assertEquals(outbox.totalItems, 1);
  const served = await getJson(note);
  assertEquals(served.content, "Hello, world");
  assertEquals(served.attributedTo, actorUrl);

  // The custom collections: one per hashtag, paged; one for signed readers.
  await fedwork.app.post(fedwork.url, "alice", "Second #Fedi post");
  await fedwork.app.post(fedwork.url, "alice", "Third #fedi post");
  const taggedUrl = fedwork.app.federation.createContext(fedwork.url, undefined)
    .getCollectionUri("tagged", { identifier: "alice", tag: "fedi" });
  assertEquals(taggedUrl.href, new URL("/users/alice/tags/fedi", fedwork.url).href);
  const tagged = await getJson(taggedUrl);
  assertEquals(tagged.type, "OrderedCollection");
  assertEquals(tagged.totalItems, 2);
  const first = await getJson(new URL(tagged.first as string));
  assertEquals(
    (first.orderedItems as { content: string }[]).map((note) => note.content),
    ["Third #fedi post", "Second #Fedi post"],
  );
  const drafts = await fetch(new URL("/users/alice/drafts", fedwork.url), {
    headers: { accept: "application/activity+json" },
  });
  await drafts.body?.cancel();
  assertEquals(drafts.status, 401);

  const missing = await fetch(new URL("/users/carol", fedwork.url), {
    headers: { accept: "application/activity+json" },
  });
  await missing.body?.cancel();
  assertEquals(missing.status, 404);
});

test("the ported app answers the same documents on Fedwork as on Fedify", async () => {
  await using fedwork = await serveFedwork("rfc9421");
  await using fedify = await serveFedify("rfc9421");
  const documents = async (app: FedworkMicroblog | FedifyMicroblog, base: URL) => {
    await app.post(base, "alice", "One #fedi");
    await app.post(base, "alice", "Two #fedi");
    const answers: Record<string, unknown> = {};
    for (
      const path of [
        "/users/alice/tags/fedi",
        "/users/alice/tags/fedi?cursor=0",
        "/users/alice/outbox",
        "/users/alice/followers",
        "/users/alice/drafts",
        "/users/carol",
        "/nodeinfo/2.1",
      ]
    ) {
      const response = await fetch(new URL(path, base), {
        headers: { accept: "application/activity+json" },
      });
      // Post ids are random UUIDs; the origins are the two servers'.
      const text = (await response.text()).replaceAll(base.origin, "https://example.com")
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>");
      const body = response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : "";
      // The one known difference: Fedify names NodeInfo's JSON schema.
      if (path.startsWith("/nodeinfo/")) delete body.$schema;
      answers[path] = { status: response.status, body };
    }
    return answers;
  };
  assertEquals(
    await documents(fedwork.app, fedwork.url),
    await documents(fedify.app, fedify.url),
  );
});

for (const spec of SPECS) {
  test(`the ported app on Fedwork and on Fedify follow each other, share a note and unfollow (${spec} first)`, async () => {
    await using fedwork = await serveFedwork(spec);
    await using fedify = await serveFedify(spec);
    // Each app makes its actors' keys on first use; an RSA key takes
    // seconds to generate on a busy machine, longer than a lookup waits.
    // Make them first, without a time limit, so that only federation is
    // under test below.
    for (const base of [fedwork.url, fedify.url]) {
      for (const user of ["alice", "bob"]) await getJson(new URL(`/users/${user}`, base));
    }

    // Fedify's alice follows Fedwork's bob, who accepts.
    await fedify.app.follow(fedify.url, "alice", new URL("/users/bob", fedwork.url));
    await waitUntil(() => received(fedify.app, Accept).length === 1, {
      what: "Fedify's alice to receive bob's Accept",
    });
    assertEquals(fedwork.app.followersOf("bob"), [new URL("/users/alice", fedify.url).href]);

    // Fedwork's alice follows Fedify's bob, who accepts.
    await fedwork.app.follow(fedwork.url, "alice", new URL("/users/bob", fedify.url));
    await waitUntil(() => received(fedwork.app, Accept).length === 1, {
      what: "Fedwork's alice to receive bob's Accept",
    });
    assertEquals(fedify.app.followersOf("bob"), [new URL("/users/alice", fedwork.url).href]);

    // Fedwork's bob posts; his follower on Fedify gets the note.
    const note = await fedwork.app.post(fedwork.url, "bob", "Hello from the port");
    await waitUntil(() => received(fedify.app, Create).length === 1, {
      what: "Fedify's alice to receive bob's note",
    });
    assertEquals(received(fedify.app, Create)[0].objectId?.href, note.href);

    // Fedify's alice unfollows; Fedwork's bob forgets her.
    await fedify.app.unfollow(fedify.url, "alice", new URL("/users/bob", fedwork.url));
    await waitUntil(() => received(fedwork.app, Undo).length === 1, {
      what: "Fedwork's bob to receive the Undo",
    });
    assertEquals(fedwork.app.followersOf("bob"), []);

    // Every POST was signed with the spec tried first and accepted.
    await waitUntil(() => fedwork.posts.length === 3, { what: "Fedwork's three POSTs recorded" });
    assertEquals(fedwork.posts.map((post) => [post.spec, post.status < 300]), [
      [spec, true],
      [spec, true],
      [spec, true],
    ]);
    assertEquals(fedify.postSpecs(), [spec, spec, spec]);
  });
}
