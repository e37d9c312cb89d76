import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { assertEquals, test } from "@fedify/fixture";
import { Follow, Person } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  generateCryptoKeyPair,
  MemoryKvStore,
} from "@fedwork/core";
import { createNodeRequestListener } from "@fedwork/express";
import { Hono } from "hono";
import { federation as serveFederation } from "./mod.ts";

const keyPair = await generateCryptoKeyPair();

function createApp(): { federation: Federation<string>; follows: [string, string][] } {
  const federation = createFederation<string>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
  });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      name: ctx.data,
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(() => [keyPair]);
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => ({ items: [] }));
  const follows: [string, string][] = [];
  federation.setInboxListeners("/users/{identifier}/inbox")
    .on(Follow, (ctx, follow) => {
      follows.push([ctx.data, follow.id!.href]);
    });
  return { federation, follows };
}

/** Serves a Fetch API handler on loopback through the node:http adapter. */
async function serve(
  handler: (request: Request) => Response | Promise<Response>,
): Promise<URL & AsyncDisposable> {
  const server = createServer(createNodeRequestListener(handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(new URL(`http://127.0.0.1:${port}/`), {
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  });
}

function startHono(federation: Federation<string>) {
  const app = new Hono();
  app.use(serveFederation(federation, (c) => `hono ${c.req.method}`));
  app.get("/users/:name", (c) => c.html(`<h1>${c.req.param("name")}</h1>`));
  app.post("/form", async (c) => c.json({ echoed: await c.req.json() }));
  return serve(app.fetch);
}

test("Hono serves actors to JSON-LD requests and its own pages to browsers", async () => {
  const { federation } = createApp();
  await using url = await startHono(federation);
  const json = await fetch(new URL("/users/alice", url), {
    headers: { Accept: "application/activity+json" },
  });
  assertEquals(json.headers.get("content-type"), "application/activity+json");
  const actor = await json.json();
  assertEquals([actor.id, actor.name], [new URL("/users/alice", url).href, "hono GET"]);
  const html = await fetch(new URL("/users/alice", url), { headers: { Accept: "text/html" } });
  assertEquals(await html.text(), "<h1>alice</h1>");
  const collection = await fetch(new URL("/users/alice/followers", url), {
    headers: { Accept: "text/html" },
  });
  await collection.body?.cancel();
  assertEquals([collection.status, collection.headers.get("vary")], [406, "Accept"]);
  const other = await fetch(new URL("/form", url), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ hello: "world" }),
  });
  assertEquals(await other.json(), { echoed: { hello: "world" } });
});

test("a signed Follow POSTed through Hono reaches the inbox listener", async () => {
  const receiver = createApp();
  await using receiverUrl = await startHono(receiver.federation);
  const sender = createApp();
  await using senderUrl = await serve((request) =>
    sender.federation.fetch(request, { contextData: "node" })
  );
  const followId = new URL("/follows/1", senderUrl);
  await sender.federation.createContext(senderUrl, "sender").sendActivity(
    { identifier: "alice" },
    { id: new URL("/users/bob", receiverUrl), inboxId: new URL("/users/bob/inbox", receiverUrl) },
    new Follow({
      id: followId,
      actor: new URL("/users/alice", senderUrl),
      object: new URL("/users/bob", receiverUrl),
    }),
  );
  assertEquals(receiver.follows, [["hono POST", followId.href]]);
});

test("Hono on node:http behind a TLS-terminating proxy serves the public origin's URIs", async () => {
  // What integrations.md shows: the public origin for the federation and
  // for the Node.js adapter, whatever address the proxy connects to.
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    origin: "https://example.com",
  });
  federation.setActorDispatcher("/users/{identifier}", (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
    }));
  federation.setInboxListeners("/users/{identifier}/inbox");
  const app = new Hono();
  app.use(serveFederation(federation, () => undefined));
  app.get("/users/:name", (c) => c.html(`<h1>${c.req.param("name")}</h1>`));
  const server = createServer(
    createNodeRequestListener(app.fetch, { origin: "https://example.com" }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/users/alice`, {
      headers: { Accept: "application/activity+json" },
    });
    const actor = await response.json();
    assertEquals([actor.id, actor.inbox], [
      "https://example.com/users/alice",
      "https://example.com/users/alice/inbox",
    ]);
    const page = await fetch(`http://127.0.0.1:${port}/users/alice`, {
      headers: { Accept: "text/html" },
    });
    assertEquals(await page.text(), "<h1>alice</h1>");
  } finally {
    server.closeAllConnections?.();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
