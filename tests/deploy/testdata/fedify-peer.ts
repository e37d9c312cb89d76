// A Fedify 2.3 server in a process of its own, the remote party of the
// self-hosting test: one actor, `bob`, who follows whom the test asks,
// accepts every Follow and records what arrives.  It trusts the test's CA
// through the environment (NODE_EXTRA_CA_CERTS for Node.js and Bun,
// DENO_CERT for Deno), so it reaches the example only as anyone would:
// over https, through nginx.
//
//   <runtime> fedify-peer.ts
//
// Prints `listening <origin>` once it serves on a loopback port; then
// answers, besides ActivityPub:
//   POST /control/follow?target=<handle or URL>  bob follows it
//   GET  /control/state                          what bob received, as JSON
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Buffer } from "node:buffer";
import process from "node:process";
import { createFederation, generateCryptoKeyPair, MemoryKvStore } from "@fedify/fedify";
import { Accept, Create, Follow, isActor, Note, Person } from "@fedify/vocab";

interface PeerState {
  /** The ids of the actors whose Accept of bob's Follow arrived. */
  accepted: string[];
  /** The ids of bob's followers. */
  followers: string[];
  /** The notes that arrived in a Create: their id, author and content. */
  notes: { id: string | null; attributedTo: string | null; content: string | null }[];
}

const state: PeerState = { accepted: [], followers: [], notes: [] };
/** Bob's followers' inboxes, by actor id. */
const inboxes = new Map<string, URL>();
const keys = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");

const federation = createFederation<void>({
  kv: new MemoryKvStore(),
  // Both servers are on loopback; Fedify refuses private addresses unless told.
  allowPrivateAddress: true,
  // draft-cavage first: the scheme whose signed `host` a proxy can break.
  firstKnock: "draft-cavage-http-signatures-12",
});
federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
  if (identifier !== "bob") return null;
  const [pair] = await ctx.getActorKeyPairs(identifier);
  return new Person({
    id: ctx.getActorUri(identifier),
    preferredUsername: identifier,
    inbox: ctx.getInboxUri(identifier),
    followers: ctx.getFollowersUri(identifier),
    publicKey: pair.cryptographicKey,
  });
}).setKeyPairsDispatcher((_ctx, identifier) => identifier === "bob" ? [keys] : []);
federation.setFollowersDispatcher("/users/{identifier}/followers", () => ({
  items: [...inboxes].map(([id, inboxId]) => ({ id: new URL(id), inboxId })),
}));
federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Follow, async (ctx, follow) => {
    const follower = await follow.getActor(ctx);
    if (follower?.id == null || ctx.parseUri(follow.objectId)?.type !== "actor") return;
    if (!state.followers.includes(follower.id.href)) state.followers.push(follower.id.href);
    if (follower.inboxId != null) inboxes.set(follower.id.href, follower.inboxId);
    await ctx.sendActivity(
      { identifier: "bob" },
      follower,
      new Accept({
        id: new URL(`#accepts/${crypto.randomUUID()}`, ctx.getActorUri("bob")),
        actor: ctx.getActorUri("bob"),
        object: follow,
      }),
    );
  })
  .on(Accept, (_ctx, accept) => {
    if (accept.actorId != null) state.accepted.push(accept.actorId.href);
  })
  .on(Create, async (ctx, create) => {
    const object = await create.getObject(ctx);
    if (!(object instanceof Note)) return;
    state.notes.push({
      id: object.id?.href ?? null,
      attributedTo: object.attributionId?.href ?? null,
      content: object.content?.toString() ?? null,
    });
  });

async function control(request: Request, origin: URL): Promise<Response | null> {
  const url = new URL(request.url);
  if (url.pathname === "/control/state") return Response.json(state);
  if (url.pathname !== "/control/follow" || request.method !== "POST") return null;
  const ctx = federation.createContext(origin, undefined);
  const target = await ctx.lookupObject(url.searchParams.get("target") ?? "");
  if (!isActor(target) || target.id == null) {
    return Response.json({ error: "not an actor" }, { status: 422 });
  }
  await ctx.sendActivity(
    { identifier: "bob" },
    target,
    new Follow({
      id: new URL(`#follows/${crypto.randomUUID()}`, ctx.getActorUri("bob")),
      actor: ctx.getActorUri("bob"),
      object: target.id,
    }),
  );
  return Response.json({ following: target.id.href });
}

const server = createServer(async (req, res) => {
  const origin = new URL(`http://${req.headers.host}`);
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(chunk);
  const request = new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([name, value]) =>
      value == null ? [] : (Array.isArray(value) ? value : [value]).map((one) => [name, one])
    ) as [string, string][],
    body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
  });
  let response: Response;
  try {
    response = await control(request, origin) ??
      await federation.fetch(request, { contextData: undefined });
  } catch (error) {
    response = Response.json({ error: String(error) }, { status: 500 });
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(new Uint8Array(await response.arrayBuffer()));
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address() as AddressInfo;
process.stdout.write(`listening http://127.0.0.1:${port}\n`);
process.once("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
