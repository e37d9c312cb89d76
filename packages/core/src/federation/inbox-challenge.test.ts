import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import {
  ACCEPT_SIGNATURE_NONCE_PREFIX,
  consumeSignatureNonce,
} from "../activitypub/inbox/challenge.ts";
import { signRequest } from "../activitypub/signatures/sign.ts";
import type { HttpSignatureSpec } from "../activitypub/signatures/spec.ts";
import type { KvStore } from "../kv/kv-store.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { createFederation } from "./federation.ts";
import type { InboxChallengePolicy } from "../activitypub/inbox/challenge.ts";
import { registerTestActor, serveFederation, testKeyPair } from "./testdata/test-support.ts";

/** A sender (alice, whose key it serves) and a receiver (bob) with the policy. */
async function withPair(
  policy: InboxChallengePolicy | undefined,
  fn: (
    send: (spec: HttpSignatureSpec | null, tamper?: boolean) => Promise<Response>,
    kv: MemoryKvStore,
    received: string[],
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
      assertEquals(await kv.get([...ACCEPT_SIGNATURE_NONCE_PREFIX, nonce]), true);
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

test("consumeSignatureNonce() accepts an issued nonce once, with or without cas()", async () => {
  const memory = new MemoryKvStore();
  const withoutCas: KvStore = {
    get: (key) => memory.get(key),
    set: (key, value, options) => memory.set(key, value, options),
    delete: (key) => memory.delete(key),
    list: (prefix) => memory.list(prefix),
  };
  for (const kv of [memory, withoutCas]) {
    await kv.set([...ACCEPT_SIGNATURE_NONCE_PREFIX, "abc"], true);
    const request = new Request("https://example.com/inbox", {
      headers: {
        "Signature-Input": 'sig1=("@method");created=1;keyid="k";nonce="abc"',
      },
    });
    assertEquals(await consumeSignatureNonce(request, kv), true);
    assertEquals(await consumeSignatureNonce(request, kv), false);
    const unknown = new Request("https://example.com/inbox", {
      headers: { "Signature-Input": 'sig1=("@method");nonce="nope"' },
    });
    assertEquals(await consumeSignatureNonce(unknown, kv), false);
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
