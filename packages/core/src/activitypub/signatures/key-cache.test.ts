import { assert, assertEquals, test } from "@fedify/fixture";
import type { DocumentLoader } from "@fedify/vocab";
import { exportSpki } from "@fedify/vocab-runtime";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { createPublicKeyFetcher, doesKeyOwnerMatchActor } from "./key-cache.ts";

const { publicKey } = await generateCryptoKeyPair();
const pem = await exportSpki(publicKey);
const actorId = "https://remote.example/users/alice";
const keyId = new URL(`${actorId}#main-key`);

function loaderOf(documents: Record<string, unknown>, loaded: string[] = []): DocumentLoader {
  return (url) => {
    loaded.push(url);
    if (!(url in documents)) return Promise.reject(new Error(`No document at ${url}`));
    return Promise.resolve({ documentUrl: url, document: documents[url], contextUrl: null });
  };
}

const actor = {
  id: actorId,
  type: "Person",
  publicKey: { id: keyId.href, owner: actorId, publicKeyPem: pem },
};

test("the key fetcher loads the actor document at the key id and caches the key", async () => {
  const loaded: string[] = [];
  const kv = new MemoryKvStore();
  const fetchKey = createPublicKeyFetcher({
    kv,
    documentLoader: loaderOf({ [actorId]: actor }, loaded),
    refreshCooldown: { seconds: 0 },
  });
  const first = await fetchKey(keyId);
  assert(first != null);
  assertEquals([first.owner?.href, first.cached], [actorId, false]);
  assertEquals(
    first.publicKey.algorithm.name,
    "RSASSA-PKCS1-v1_5",
  );
  const second = await fetchKey(keyId);
  assertEquals([second?.owner?.href, second?.cached], [actorId, true]);
  assertEquals(loaded, [actorId]);
  const refreshed = await fetchKey(keyId, { refresh: true });
  assertEquals(refreshed?.cached, false);
  assertEquals(loaded, [actorId, actorId]);
  assertEquals((await kv.get(["fedwork", "public-key", keyId.href])) != null, true);
});

test("the key fetcher reads a key published as its own document", async () => {
  const standaloneId = new URL("https://remote.example/users/alice/main-key");
  const fetchKey = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: loaderOf({
      [standaloneId.href]: { id: standaloneId.href, owner: actorId, publicKeyPem: pem },
    }),
  });
  assertEquals((await fetchKey(standaloneId))?.owner?.href, actorId);
});

test("the key fetcher trusts an owner on another origin only if it lists the key", async () => {
  const foreignKeyId = new URL("https://keys.example/alice#key");
  const keyDocument = { id: foreignKeyId.href, owner: actorId, publicKeyPem: pem };
  const denied = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: loaderOf({ "https://keys.example/alice": keyDocument, [actorId]: actor }),
  });
  const unconfirmed = await denied(foreignKeyId);
  assert(unconfirmed != null);
  assertEquals(unconfirmed.owner, null);
  const allowed = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: loaderOf({
      "https://keys.example/alice": keyDocument,
      [actorId]: { ...actor, publicKey: [actor.publicKey, foreignKeyId.href] },
    }),
  });
  assertEquals((await allowed(foreignKeyId))?.owner?.href, actorId);
});

test("the key fetcher answers null when the document cannot be loaded or lacks the key", async () => {
  const fetchKey = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: loaderOf({ [actorId]: { ...actor, publicKey: [] } }),
  });
  assertEquals(await fetchKey(keyId), null);
  assertEquals(await fetchKey(new URL("https://elsewhere.example/#key")), null);
});

test("doesKeyOwnerMatchActor() compares the key's owner with the activity's single actor", () => {
  const key = { keyId, publicKey, owner: new URL(actorId), cached: false };
  assertEquals(doesKeyOwnerMatchActor({ type: "Follow", actor: actorId }, key), true);
  assertEquals(doesKeyOwnerMatchActor({ actor: { id: actorId, type: "Person" } }, key), true);
  assertEquals(
    doesKeyOwnerMatchActor({ actor: "https://remote.example/users/mallory" }, key),
    false,
  );
  assertEquals(doesKeyOwnerMatchActor({ actor: [actorId, actorId] }, key), false);
  assertEquals(doesKeyOwnerMatchActor({ actor: actorId }, { ...key, owner: null }), false);
  assertEquals(doesKeyOwnerMatchActor("not an object", key), false);
});

test("the key fetcher refetches a key to refresh it at most once per cooldown", async () => {
  const loaded: string[] = [];
  const fetchKey = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: loaderOf({ [actorId]: actor }, loaded),
  });
  assert(await fetchKey(keyId) != null);
  // A flood of forged signatures naming this key asks for refreshes.
  for (let i = 0; i < 10; i++) assertEquals(await fetchKey(keyId, { refresh: true }), null);
  assertEquals(loaded, [actorId]);
  assertEquals((await fetchKey(keyId))?.cached, true);
});

test("the key fetcher refuses an oversized key and does not believe an oversized owner", async () => {
  const kv = new MemoryKvStore();
  const huge = `-----BEGIN PUBLIC KEY-----\n${"A".repeat(100_000)}\n-----END PUBLIC KEY-----`;
  const longOwner = `https://remote.example/${"u".repeat(5000)}`;
  const hugeKey = createPublicKeyFetcher({
    kv,
    documentLoader: loaderOf({
      [actorId]: { ...actor, publicKey: { ...actor.publicKey, publicKeyPem: huge } },
    }),
  });
  assertEquals(await hugeKey(keyId), null);
  const longOwned = createPublicKeyFetcher({
    kv,
    documentLoader: loaderOf({
      [actorId]: { ...actor, publicKey: { ...actor.publicKey, owner: longOwner } },
    }),
  });
  const key = await longOwned(keyId);
  assertEquals(key?.owner, null);
  let bytes = 0;
  for await (const entry of kv.list()) bytes += JSON.stringify(entry.value).length;
  assert(bytes < 2048, `${bytes} bytes stored`);
});
