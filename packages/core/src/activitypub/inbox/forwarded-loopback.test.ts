// Forwarded activities between three federations on loopback: Alice's
// server sends a reply to Carol's, whose listener forwards it to Bob's.
// Bob's server trusts it through the proof sendActivity() put on it.
import { assert, assertEquals, test, withLogs } from "@fedify/fixture";
import { Create, Note, Person } from "@fedify/vocab";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { signObject } from "../proofs/proof.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import { post } from "../../federation/testdata/inbox-test-support.ts";
import { serveFederation, testKeyPair } from "../../federation/testdata/test-support.ts";

const rsa = await testKeyPair();
const ed25519 = await generateCryptoKeyPair("Ed25519");

interface ActorServer {
  readonly federation: Federation<void>;
  /** The Creates the inbox listener received, as JSON. */
  readonly received: Record<string, unknown>[];
  url(path: string): URL;
  close(): Promise<void>;
}

/**
 * A federation whose actors have the shared RSA key pair and, with
 * `ed25519`, an Ed25519 one too, publishing both (`publicKey` and
 * `assertionMethod`); its Create listener records the activity and, with
 * `forwardTo`, forwards it as Carol.
 */
async function startActorServer(
  options: { ed25519: boolean; forwardTo?: () => URL },
): Promise<ActorServer> {
  const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const pairs = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
      publicKey: pairs[0].cryptographicKey,
      assertionMethods: pairs.map((pair) => pair.multikey),
    });
  }).setKeyPairsDispatcher(() => options.ed25519 ? [rsa, ed25519] : [rsa]);
  const received: Record<string, unknown>[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Create, async (ctx, create) => {
      received.push(await create.toJsonLd() as Record<string, unknown>);
      if (options.forwardTo != null) {
        await ctx.forwardActivity({ identifier: "carol" }, {
          id: null,
          inboxId: options.forwardTo(),
        });
      }
    });
  const server = await serveFederation(federation, undefined);
  return {
    federation,
    received,
    url: (path) => new URL(path, server.url),
    close: () => server.close(),
  };
}

function reply(origin: ActorServer, local: ActorServer): Create {
  return new Create({
    id: origin.url("/activities/reply-1"),
    actor: origin.url("/users/alice"),
    object: new Note({
      id: origin.url("/notes/reply-1"),
      attribution: origin.url("/users/alice"),
      replyTarget: local.url("/notes/1"),
      content: "A reply to Bob's thread",
    }),
  });
}

async function withThreeServers(
  aliceHasEd25519: boolean,
  fn: (origin: ActorServer, forwarder: ActorServer, local: ActorServer) => Promise<void>,
): Promise<void> {
  const local = await startActorServer({ ed25519: true });
  const forwarder = await startActorServer({
    ed25519: false,
    forwardTo: () => local.url("/users/bob/inbox"),
  });
  const origin = await startActorServer({ ed25519: aliceHasEd25519 });
  try {
    await fn(origin, forwarder, local);
  } finally {
    await Promise.all([origin.close(), forwarder.close(), local.close()]);
  }
}

test("a reply forwarded by a third server reaches the listener, trusted by its actor's proof", () =>
  withThreeServers(true, async (origin, forwarder, local) => {
    const ctx = origin.federation.createContext(origin.url("/"), undefined);
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: forwarder.url("/users/carol"), inboxId: forwarder.url("/users/carol/inbox") },
      reply(origin, local),
    );
    // sendActivity() made the proof with Alice's Ed25519 key...
    assertEquals(forwarder.received.length, 1);
    const proof = forwarder.received[0].proof as Record<string, unknown> | undefined;
    assertEquals(proof?.verificationMethod, origin.url("/users/alice#multikey-2").href);
    // ...and Carol's forward, signed by Carol, reached Bob's listener.
    assertEquals(local.received.map((activity) => [activity.id, activity.actor]), [
      [origin.url("/activities/reply-1").href, origin.url("/users/alice").href],
    ]);
  }));

test("a forwarded activity without a proof, or with a forged one, gets 401 and reaches no listener", () =>
  withThreeServers(false, async (origin, forwarder, local) => {
    const carolKey = { keyId: forwarder.url("/users/carol#main-key"), privateKey: rsa.privateKey };
    const json = await reply(origin, local).toJsonLd() as Record<string, unknown>;
    const other = await generateCryptoKeyPair("Ed25519");
    const forged = await signObject(json, {
      privateKey: other.privateKey,
      keyId: origin.url("/users/alice#multikey-1"),
    });
    const inbox = local.url("/users/bob/inbox");
    const statuses = [
      (await post(inbox, JSON.stringify(json), carolKey)).status,
      (await post(inbox, JSON.stringify(forged), carolKey)).status,
    ];
    assertEquals(statuses, [401, 401]);
    assertEquals(local.received.length, 0);
    // Alice has no Ed25519 key: what she sends carries no proof.
    const ctx = origin.federation.createContext(origin.url("/"), undefined);
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: local.url("/users/bob"), inboxId: local.url("/users/bob/inbox") },
      reply(origin, local),
    );
    assertEquals(local.received.length, 1);
    assert(!("proof" in local.received[0]));
  }));

test("a reply from an actor with only an RSA key, forwarded, is trusted by its Linked Data signature", () =>
  withThreeServers(false, async (origin, forwarder, local) => {
    const ctx = origin.federation.createContext(origin.url("/"), undefined);
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: forwarder.url("/users/carol"), inboxId: forwarder.url("/users/carol/inbox") },
      reply(origin, local),
    );
    assertEquals(forwarder.received.length, 1);
    assert(!("proof" in forwarder.received[0]));
    assertEquals(local.received.map((activity) => [activity.id, activity.actor]), [
      [origin.url("/activities/reply-1").href, origin.url("/users/alice").href],
    ]);
  }));

test("forwarding an activity with neither a proof nor a signature warns, and the receiver refuses it", () =>
  withThreeServers(false, async (origin, forwarder, local) => {
    await withLogs(async (records) => {
      // Signed by Alice over HTTP only, as a server without object
      // signatures would send it.
      const json = await reply(origin, local).toJsonLd() as Record<string, unknown>;
      await post(forwarder.url("/users/carol/inbox"), JSON.stringify(json), {
        keyId: origin.url("/users/alice#main-key"),
        privateKey: rsa.privateKey,
      });
      assertEquals(forwarder.received.length, 1);
      const warning = records.find((record) =>
        record.level === "warning" && record.properties.forwarder === "carol"
      );
      assertEquals(warning?.properties.activityId, json.id);
      assertEquals(local.received.length, 0);
    });
  }));
