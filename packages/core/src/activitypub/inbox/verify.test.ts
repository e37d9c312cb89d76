import { assert, assertEquals, test } from "@fedify/fixture";
import type { DocumentLoader } from "@fedify/vocab";
import { exportSpki } from "@fedify/vocab-runtime";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { signRequest } from "../signatures/sign.ts";
import type { HttpSignatureSpec } from "../signatures/spec.ts";
import { verifyInboxRequest } from "./verify.ts";

const alice = "https://remote.example/users/alice";
const mallory = "https://remote.example/users/mallory";
const aliceKeys = await generateCryptoKeyPair();
const malloryKeys = await generateCryptoKeyPair();
const documents: Record<string, unknown> = {
  [alice]: {
    id: alice,
    type: "Person",
    publicKey: {
      id: `${alice}#main-key`,
      owner: alice,
      publicKeyPem: await exportSpki(aliceKeys.publicKey),
    },
  },
  [mallory]: {
    id: mallory,
    type: "Person",
    publicKey: {
      id: `${mallory}#main-key`,
      owner: mallory,
      publicKeyPem: await exportSpki(malloryKeys.publicKey),
    },
  },
};
const follow = {
  "@context": "https://www.w3.org/ns/activitystreams",
  id: `${alice}#follows/1`,
  type: "Follow",
  actor: alice,
  object: "https://example.com/users/bob",
};

function loader(loaded: string[] = []): DocumentLoader {
  return (url) => {
    loaded.push(url);
    return url in documents
      ? Promise.resolve({ documentUrl: url, document: documents[url], contextUrl: null })
      : Promise.reject(new Error(`404 ${url}`));
  };
}

function signed(
  body: string,
  signer = alice,
  privateKey = aliceKeys.privateKey,
  spec: HttpSignatureSpec = "rfc9421",
): Promise<Request> {
  return signRequest(
    new Request("https://example.com/users/bob/inbox", {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body,
    }),
    privateKey,
    new URL(`${signer}#main-key`),
    { spec },
  );
}

for (const spec of ["rfc9421", "draft-cavage-http-signatures-12"] as const) {
  test(`verifyInboxRequest() accepts an activity signed by its actor with ${spec}`, async () => {
    const request = await signed(JSON.stringify(follow), alice, aliceKeys.privateKey, spec);
    const result = await verifyInboxRequest(request, {
      kv: new MemoryKvStore(),
      documentLoader: loader(),
    });
    assert(result.ok, JSON.stringify(result));
    assertEquals(result.activity, follow);
    assertEquals(result.signer.href, alice);
    assertEquals(result.spec, spec);
    assertEquals(new TextDecoder().decode(result.body), JSON.stringify(follow));
  });
}

test("verifyInboxRequest() fetches a key once and then reads it from the KV store", async () => {
  const loaded: string[] = [];
  const kv = new MemoryKvStore();
  for (let i = 0; i < 2; i++) {
    const result = await verifyInboxRequest(await signed(JSON.stringify(follow)), {
      kv,
      documentLoader: loader(loaded),
    });
    assert(result.ok);
  }
  assertEquals(loaded, [alice]);
});

test("verifyInboxRequest() answers 401 when the signer is not the activity's actor", async () => {
  const request = await signed(JSON.stringify(follow), mallory, malloryKeys.privateKey);
  const result = await verifyInboxRequest(request, {
    kv: new MemoryKvStore(),
    documentLoader: loader(),
  });
  assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "actorMismatch"]);
});

test("verifyInboxRequest() answers 401 for an unsigned or badly signed request", async () => {
  const unsigned = new Request("https://example.com/inbox", {
    method: "POST",
    body: JSON.stringify(follow),
  });
  const options = { kv: new MemoryKvStore(), documentLoader: loader() };
  const result = await verifyInboxRequest(unsigned, options);
  assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "noSignature"]);
  // Signed with Mallory's private key but claiming Alice's key.
  const forged = await signed(JSON.stringify(follow), alice, malloryKeys.privateKey);
  const refused = await verifyInboxRequest(forged, options);
  assertEquals(refused.ok ? "ok" : [refused.status, refused.reason], [401, "invalidSignature"]);
});

test("verifyInboxRequest() answers 400 for a body that is not a JSON object", async () => {
  const options = { kv: new MemoryKvStore(), documentLoader: loader() };
  for (const body of ["not json", "[1, 2]", "42"]) {
    const result = await verifyInboxRequest(await signed(body), options);
    assertEquals(result.ok ? "ok" : [result.status, result.reason], [400, "invalidJson"], body);
  }
});

test("verifyInboxRequest() answers 413 for a body over the cap, declared or streamed", async () => {
  const options = { kv: new MemoryKvStore(), documentLoader: loader(), maxBodySize: 64 };
  const body = JSON.stringify(follow);
  // A signature header, so that the body is worth reading.
  const signature = `keyId="${alice}#main-key",signature="AAAA"`;
  const declared = new Request("https://example.com/inbox", {
    method: "POST",
    headers: { "Content-Length": String(body.length), Signature: signature },
    body,
  });
  const streamed = new Request("https://example.com/inbox", {
    method: "POST",
    headers: { Signature: signature },
    body,
  });
  for (const request of [declared, streamed]) {
    const result = await verifyInboxRequest(request, options);
    assertEquals(result.ok ? "ok" : [result.status, result.reason], [413, "bodyTooLarge"]);
  }
});

/** A body of `chunks` chunks of 256 spaces, counting the bytes pulled from it. */
function countingBody(chunks: number): { body: ReadableStream<Uint8Array>; delivered(): number } {
  let delivered = 0;
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled++ >= chunks) return controller.close();
      delivered += 256;
      controller.enqueue(new Uint8Array(256).fill(0x20));
    },
  }, { highWaterMark: 0 });
  return { body, delivered: () => delivered };
}

test("verifyInboxRequest() refuses a request without any signature before reading its body", async () => {
  const { body, delivered } = countingBody(64);
  const request = new Request("https://example.com/inbox", {
    method: "POST",
    body,
    duplex: "half",
  } as RequestInit);
  const loaded: string[] = [];
  const result = await verifyInboxRequest(request, {
    kv: new MemoryKvStore(),
    documentLoader: loader(loaded),
  });
  assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "noSignature"]);
  assertEquals([delivered(), loaded], [0, []]);
});

/**
 * The follow with its object nested `levels` objects deep, written as text:
 * some runtimes' JSON.stringify() overflows the stack on deep values.
 */
function nestedFollow(levels: number): string {
  const object = '{"nested":'.repeat(levels) + '"bottom"' + "}".repeat(levels);
  return JSON.stringify({ ...follow, object: "OBJECT" }).replace('"OBJECT"', object);
}

test("verifyInboxRequest() refuses an activity nesting deeper than 64 levels before fetching a key", async () => {
  const loaded: string[] = [];
  const options = { kv: new MemoryKvStore(), documentLoader: loader(loaded) };
  // The activity is the first level: 63 more make 64.
  const accepted = await verifyInboxRequest(await signed(nestedFollow(63)), options);
  assert(accepted.ok, JSON.stringify(accepted));
  for (const levels of [64, 10_000]) {
    loaded.length = 0;
    const result = await verifyInboxRequest(await signed(nestedFollow(levels)), options);
    assertEquals(
      result.ok ? "ok" : [result.status, result.reason, loaded],
      [400, "nestingTooDeep", []],
      `${levels} levels`,
    );
  }
});
