import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { ACCEPT_SIGNATURE_NONCE_PREFIX, consumeSignatureNonce } from "./challenge.ts";
import {
  type BareItem,
  type InnerList,
  type Item,
  parseDictionary,
  serializeDictionary,
  serializeInnerList,
} from "structured-headers";
import { signRequest } from "../signatures/sign.ts";
import type { HttpSignatureSpec } from "../signatures/spec.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFederation } from "../../federation/federation.ts";
import type { InboxChallengePolicy } from "./challenge.ts";
import {
  registerTestActor,
  serveFederation,
  testKeyPair,
} from "../../federation/testdata/test-support.ts";

/** A sender (alice, whose key it serves) and a receiver (bob) with the policy. */
async function withPair(
  policy: InboxChallengePolicy | undefined,
  fn: (
    send: (spec: HttpSignatureSpec | null, tamper?: boolean) => Promise<Response>,
    kv: MemoryKvStore,
    received: string[],
    servers: { readonly sender: URL; readonly receiver: URL },
  ) => Promise<void>,
): Promise<void> {
  const sender = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  registerTestActor(sender);
  const kv = new MemoryKvStore();
  const receiver = createFederation<void>({
    kv,
    allowPrivateAddress: true,
    ...(policy == null ? {} : { inboxChallengePolicy: policy }),
  });
  registerTestActor(receiver);
  const received: string[] = [];
  receiver.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (_ctx, follow) => void received.push(follow.id!.href));
  const senderServer = await serveFederation(sender, undefined);
  const receiverServer = await serveFederation(receiver, undefined);
  let count = 0;
  try {
    const { privateKey } = await testKeyPair();
    await fn(
      async (spec, tamper = false) => {
        const inbox = new URL("/users/bob/inbox", receiverServer.url);
        const body = JSON.stringify({
          "@context": "https://www.w3.org/ns/activitystreams",
          id: new URL(`/follows/${++count}`, senderServer.url).href,
          type: "Follow",
          actor: new URL("/users/alice", senderServer.url).href,
          object: new URL("/users/bob", receiverServer.url).href,
        });
        let request = new Request(inbox, {
          method: "POST",
          headers: { "Content-Type": "application/activity+json" },
          body,
        });
        if (spec != null) {
          const keyId = new URL("/users/alice#main-key", senderServer.url);
          request = await signRequest(request, privateKey, keyId, { spec });
        }
        if (tamper) {
          request = new Request(inbox, {
            method: "POST",
            headers: request.headers,
            body: `${body} `,
          });
        }
        const response = await fetch(request);
        await response.body?.cancel();
        return response;
      },
      kv,
      received,
      { sender: senderServer.url, receiver: receiverServer.url },
    );
  } finally {
    await senderServer.close();
    await receiverServer.close();
  }
}

test("inboxChallengePolicy: a 401 for a failed signature carries an Accept-Signature challenge", async () => {
  await withPair({ enabled: true }, async (send, _kv, received) => {
    for (const response of [await send(null), await send("rfc9421", true)]) {
      assertEquals(response.status, 401);
      assertEquals(
        response.headers.get("accept-signature"),
        'sig1=("@method" "@target-uri" "@authority" "content-digest");created',
      );
      assertEquals(response.headers.get("cache-control"), "no-store");
    }
    const accepted = await send("rfc9421");
    assertEquals(accepted.status, 202);
    assertEquals(accepted.headers.get("accept-signature"), null);
    assertEquals(received.length, 1);
  });
});

test("inboxChallengePolicy: without it (Fedify's default) a 401 carries no challenge", async () => {
  await withPair(undefined, async (send) => {
    const response = await send(null);
    assertEquals(response.status, 401);
    assertEquals(response.headers.get("accept-signature"), null);
  });
});

test("inboxChallengePolicy with requestNonce: RFC 9421 signatures must carry an issued nonce", async () => {
  await withPair(
    { enabled: true, requestNonce: true, components: ["@method", "@target-uri", "date"] },
    async (send, kv, received) => {
      const challenged = await send(null);
      const header = challenged.headers.get("accept-signature") ?? "";
      const nonce = /;nonce="([A-Za-z0-9_-]+)"/.exec(header)?.[1];
      assert(nonce != null, header);
      assert(header.startsWith('sig1=("@method" "@target-uri" "@authority" "date");created'));
      // Bound to the inbox that issued it.
      assertEquals(
        await kv.get([...ACCEPT_SIGNATURE_NONCE_PREFIX, nonce]),
        new URL("/users/bob/inbox", challenged.url).href,
      );
      // A valid signature without the nonce is challenged again, with a new one.
      const refused = await send("rfc9421");
      assertEquals(refused.status, 401);
      assert(!refused.headers.get("accept-signature")?.includes(nonce));
      // draft-cavage signatures have no nonce to carry, and are not asked for one.
      assertEquals((await send("draft-cavage-http-signatures-12")).status, 202);
      assertEquals(received.length, 1);
    },
  );
});

/**
 * Signs a Follow from alice to bob's inbox at `inbox` with RFC 9421, the
 * way a sender answering a challenge does: `sig1` carries `nonce` (when
 * given) among its own, covered, parameters.  With `strayNonce`, `sig1`
 * carries none, and a second member `sig2`, a copy of `sig1` that no longer
 * verifies, carries the nonce instead: what anyone can add to a request.
 */
async function followSignedWithNonce(
  servers: { readonly sender: URL; readonly receiver: URL },
  inbox: URL,
  nonce: string | null,
  options: { readonly strayNonce?: boolean } = {},
): Promise<Request> {
  const { privateKey } = await testKeyPair();
  const body = JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: new URL(`/follows/${crypto.randomUUID()}`, servers.sender).href,
    type: "Follow",
    actor: new URL("/users/alice", servers.sender).href,
    object: new URL("/users/bob", servers.receiver).href,
  });
  const keyId = new URL("/users/alice#main-key", servers.sender);
  // signRequest() adds Date and Content-Digest; sig1 is then made anew.
  const signed = await signRequest(
    new Request(inbox, {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body,
    }),
    privateKey,
    keyId,
    { spec: "rfc9421" },
  );
  const [items, parameters] = parseDictionary(signed.headers.get("signature-input")!)
    .get("sig1") as InnerList;
  const own = new Map<string, BareItem>(parameters);
  if (nonce != null && !options.strayNonce) own.set("nonce", nonce);
  const member: InnerList = [items, own];
  const values: Record<string, string> = {
    "@method": "POST",
    "@target-uri": inbox.href,
    "@authority": inbox.host,
  };
  const lines = items.map(([name]) =>
    `"${name}": ${values[name as string] ?? signed.headers.get(name as string)}`
  );
  lines.push(`"@signature-params": ${serializeInnerList(member)}`);
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    privateKey,
    new TextEncoder().encode(lines.join("\n")),
  );
  const inputs = new Map<string, InnerList>([["sig1", member]]);
  const signatures = new Map<string, Item>([["sig1", [signature, new Map()]]]);
  if (nonce != null && options.strayNonce) {
    inputs.set("sig2", [items, new Map(parameters).set("nonce", nonce)]);
    signatures.set("sig2", [signature, new Map()]);
  }
  const headers = new Headers(signed.headers);
  headers.set("Signature-Input", serializeDictionary(inputs));
  headers.set("Signature", serializeDictionary(signatures));
  return new Request(inbox, { method: "POST", headers, body });
}

/** Asks bob's inbox for a challenge and returns its nonce. */
async function challengeNonce(inbox: URL): Promise<string> {
  const response = await fetch(inbox, { method: "POST", body: "{}" });
  await response.body?.cancel();
  const header = response.headers.get("accept-signature") ?? "";
  const nonce = /;nonce="([A-Za-z0-9_-]+)"/.exec(header)?.[1];
  assert(response.status === 401 && nonce != null, header);
  return nonce;
}

async function statusOf(request: Request): Promise<number> {
  const response = await fetch(request);
  await response.body?.cancel();
  return response.status;
}

const NONCE_POLICY: InboxChallengePolicy = { enabled: true, requestNonce: true };

test("inboxChallengePolicy with requestNonce accepts a nonce in the signature that verified, once", async () => {
  await withPair(NONCE_POLICY, async (_send, _kv, received, servers) => {
    const inbox = new URL("/users/bob/inbox", servers.receiver);
    const nonce = await challengeNonce(inbox);
    assertEquals(await statusOf(await followSignedWithNonce(servers, inbox, nonce)), 202);
    // A second request (another activity) with the same nonce is a replay.
    assertEquals(await statusOf(await followSignedWithNonce(servers, inbox, nonce)), 401);
    assertEquals(received.length, 1);
  });
});

test("hostile peer: a nonce outside the signature that verified does not pass the challenge", async () => {
  await withPair(NONCE_POLICY, async (_send, kv, received, servers) => {
    const inbox = new URL("/users/bob/inbox", servers.receiver);
    // Anyone can get a fresh nonce by posting garbage; here it rides in a
    // second, unverifiable member next to a genuine signature without one.
    const nonce = await challengeNonce(inbox);
    const request = await followSignedWithNonce(servers, inbox, nonce, { strayNonce: true });
    assertEquals(await statusOf(request), 401);
    assertEquals(received.length, 0);
    // The nonce was not used up by the stray copy.
    assertEquals(await kv.get([...ACCEPT_SIGNATURE_NONCE_PREFIX, nonce]), inbox.href);
  });
});

test("hostile peer: a nonce issued at one inbox is refused at another", async () => {
  await withPair(NONCE_POLICY, async (_send, _kv, received, servers) => {
    const personal = new URL("/users/bob/inbox", servers.receiver);
    const shared = new URL("/inbox", servers.receiver);
    const nonce = await challengeNonce(personal);
    assertEquals(await statusOf(await followSignedWithNonce(servers, shared, nonce)), 401);
    assertEquals(received.length, 0);
    // It still answers the challenge where it was issued.
    assertEquals(await statusOf(await followSignedWithNonce(servers, personal, nonce)), 202);
    assertEquals(received.length, 1);
  });
});

test("consumeSignatureNonce() accepts an issued nonce once, at its inbox, with or without cas()", async () => {
  const memory = new MemoryKvStore();
  const withoutCas: KvStore = {
    get: (key) => memory.get(key),
    set: (key, value, options) => memory.set(key, value, options),
    delete: (key) => memory.delete(key),
    list: (prefix) => memory.list(prefix),
  };
  const inbox = new URL("https://example.com/users/bob/inbox");
  for (const kv of [memory, withoutCas]) {
    await kv.set([...ACCEPT_SIGNATURE_NONCE_PREFIX, "abc"], inbox.href);
    // Another inbox, of this server or another, does not use it up.
    assertEquals(
      await consumeSignatureNonce("abc", new URL("https://example.com/inbox"), kv),
      false,
    );
    assertEquals(
      await consumeSignatureNonce("abc", new URL("https://other.example/users/bob/inbox"), kv),
      false,
    );
    // The query is no part of the inbox.
    assertEquals(await consumeSignatureNonce("abc", new URL("?page=1", inbox), kv), true);
    assertEquals(await consumeSignatureNonce("abc", inbox, kv), false);
    assertEquals(await consumeSignatureNonce("nope", inbox, kv), false);
    assertEquals(await consumeSignatureNonce(undefined, inbox, kv), false);
    assertEquals(await consumeSignatureNonce("x".repeat(65), inbox, kv), false);
  }
});

test("inboxChallengePolicy is checked when the federation is created", () => {
  const kv = new MemoryKvStore();
  assertThrows(
    // @ts-expect-error: enabled must be a boolean
    () => createFederation({ kv, inboxChallengePolicy: { enabled: "yes" } }),
    TypeError,
    "inboxChallengePolicy.enabled",
  );
  assertThrows(
    () =>
      // @ts-expect-error: a misspelt field
      createFederation({ kv, inboxChallengePolicy: { enabled: true, requestNonces: true } }),
    UnknownOptionError,
    "inboxChallengePolicy.requestNonce",
  );
  assertThrows(
    () => createFederation({ kv, inboxChallengePolicy: { enabled: true, nonceTtlSeconds: 0 } }),
    RangeError,
    "inboxChallengePolicy.nonceTtlSeconds",
  );
});
