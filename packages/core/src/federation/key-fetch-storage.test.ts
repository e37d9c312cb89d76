// How much a flood of unauthenticated requests can make a federation
// store: each names a new key id on a hostile server whose documents are
// large, and none verifies.  The federation's document loader is a
// kvCache() over the same store, as Fedify applications set it up.
import { assert, assertEquals, startTestServer, test } from "@fedify/fixture";
import { exportSpki } from "@fedify/vocab-runtime";
import { Follow } from "@fedify/vocab";
import { generateCryptoKeyPair } from "../activitypub/actors/keys.ts";
import { createFetchDocumentLoader } from "../activitypub/network/document-loader.ts";
import { kvCache } from "../activitypub/network/kv-cache.ts";
import { signRequest } from "../activitypub/signatures/sign.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation } from "./federation.ts";

const REQUESTS = 150;
const PADDING = "x".repeat(200 * 1024);

/** The bytes of JSON the store holds: keys and values. */
async function storedBytes(kv: MemoryKvStore): Promise<number> {
  let bytes = 0;
  for await (const entry of kv.list()) {
    bytes += JSON.stringify(entry.key).length + JSON.stringify(entry.value).length;
  }
  return bytes;
}

test("150 unauthenticated requests naming new key ids store a few KiB each at most, not their documents", async () => {
  const signing = await generateCryptoKeyPair();
  // The keys the hostile server publishes are not the one that signed.
  const other = await generateCryptoKeyPair();
  const otherPem = await exportSpki(other.publicKey);
  await using keyServer = await startTestServer((request) => {
    const url = new URL(request.url);
    const n = Number(url.pathname.split("/u").at(-1));
    const actor = `${url.origin}${url.pathname}`;
    // Half list a key that does not verify, half do not list the key.
    const publicKey = n % 2 === 0
      ? { id: `${actor}#main-key`, owner: actor, publicKeyPem: otherPem }
      : { id: `${actor}#other-key`, owner: actor, publicKeyPem: otherPem };
    return new Response(
      JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: actor,
        type: "Person",
        summary: PADDING,
        publicKey,
      }),
      { headers: { "Content-Type": "application/activity+json" } },
    );
  });
  const kv = new MemoryKvStore();
  const federation = createFederation<void>({
    kv,
    allowPrivateAddress: true,
    documentLoader: kvCache({
      loader: createFetchDocumentLoader({
        userAgent: "FedworkTest/1.0",
        allowPrivateAddress: true,
      }),
      kv,
    }),
  });
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Follow, () => {});
  const statuses = new Set<number>();
  for (let i = 0; i < REQUESTS; i++) {
    const keyId = new URL(`/users/u${i}#main-key`, keyServer.url);
    const body = JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: new URL(`/follows/${i}`, keyServer.url).href,
      type: "Follow",
      actor: new URL(`/users/u${i}`, keyServer.url).href,
      object: "https://example.com/users/bob",
    });
    const request = await signRequest(
      new Request("https://example.com/inbox", {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body,
      }),
      signing.privateKey,
      keyId,
    );
    const response = await federation.fetch(request, { contextData: undefined });
    await response.body?.cancel();
    statuses.add(response.status);
  }
  assertEquals([...statuses], [401]);
  assertEquals(keyServer.requests.length, REQUESTS);
  const bytes = await storedBytes(kv);
  // Before, each request left its 200 KiB document in the store (about
  // 30 MiB in all); now only the 75 keys that were found are kept, each
  // under 1 KiB.
  assert(bytes < REQUESTS * 1024, `${bytes} bytes stored`);
});
