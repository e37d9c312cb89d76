import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { assertEquals, test } from "@fedify/fixture";
import { Follow, Person } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  generateCryptoKeyPair,
  MemoryKvStore,
} from "@fedwork/core";
import express from "express";
import { createNodeRequestListener, integrateFederation, notAcceptableFallback } from "./mod.ts";

const keyPair = await generateCryptoKeyPair();

/** A federation with actors, followers and an inbox that records Follows. */
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

async function listen(server: Server): Promise<URL & AsyncDisposable> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(`http://127.0.0.1:${port}/`);
  return Object.assign(url, {
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  });
}

function startExpress(federation: Federation<string>) {
  const app = express();
  app.use(integrateFederation(federation, (req) => `express ${req.method}`));
  app.get("/users/:name", (req, res) => {
    res.type("html").send(`<h1>${req.params.name}</h1>`);
  });
  app.post("/form", express.json(), (req, res) => {
    res.json({ echoed: req.body });
  });
  app.use(notAcceptableFallback());
  return listen(createServer(app));
}

test("Express serves actors to JSON-LD requests and its own pages to browsers", async () => {
  const { federation } = createApp();
  await using url = await startExpress(federation);
  const json = await fetch(new URL("/users/alice", url), {
    headers: { Accept: "application/activity+json" },
  });
  assertEquals(json.headers.get("content-type"), "application/activity+json");
  assertEquals(json.headers.get("vary"), "Accept");
  const actor = await json.json();
  assertEquals([actor.id, actor.name], [new URL("/users/alice", url).href, "express GET"]);
  const html = await fetch(new URL("/users/alice", url), { headers: { Accept: "text/html" } });
  assertEquals(await html.text(), "<h1>alice</h1>");
  // No route renders the followers collection as HTML: 406.
  const collection = await fetch(new URL("/users/alice/followers", url), {
    headers: { Accept: "text/html" },
  });
  await collection.body?.cancel();
  assertEquals(collection.status, 406);
  const webfinger = await fetch(
    new URL(`/.well-known/webfinger?resource=acct:alice@${url.host}`, url),
  );
  assertEquals((await webfinger.json()).subject, `acct:alice@${url.host}`);
});

test("a request the federation does not serve reaches the next route with its body", async () => {
  const { federation } = createApp();
  await using url = await startExpress(federation);
  const response = await fetch(new URL("/form", url), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ hello: "world" }),
  });
  assertEquals(await response.json(), { echoed: { hello: "world" } });
});

test("a signed Follow POSTed through Express reaches the inbox listener", async () => {
  const receiver = createApp();
  await using receiverUrl = await startExpress(receiver.federation);
  const sender = createApp();
  await using senderUrl = await listen(
    createServer(
      createNodeRequestListener((request) =>
        sender.federation.fetch(request, { contextData: "node" })
      ),
    ),
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
  assertEquals(receiver.follows, [["express POST", followId.href]]);
});
