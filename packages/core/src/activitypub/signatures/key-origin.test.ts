// A hostile peer's ways of making a key pass for another origin's actor: an
// open redirect on that origin, or a file uploaded to it.
import { assert, assertEquals, startTestServer, test } from "@fedify/fixture";
import { exportSpki } from "@fedify/vocab-runtime";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { createFetchDocumentLoader } from "../network/document-loader.ts";
import { createPublicKeyFetcher } from "./key-cache.ts";

const attackerPem = await exportSpki((await generateCryptoKeyPair()).publicKey);
const documentLoader = createFetchDocumentLoader({
  userAgent: "FedworkTest/1.0",
  allowPrivateAddress: true,
});

/** A key document that claims `owner` and names itself `keyId`. */
function forgedKey(keyId: URL, owner: URL) {
  return { id: keyId.href, type: "Key", owner: owner.href, publicKeyPem: attackerPem };
}

test("a key document reached through a redirect to another origin is not believed", async () => {
  let victimOrigin = "";
  await using attacker = await startTestServer((request) => {
    const keyId = new URL(new URL(request.url).searchParams.get("key")!);
    return Response.json(forgedKey(keyId, new URL("/users/alice", victimOrigin)), {
      headers: { "Content-Type": "application/activity+json" },
    });
  });
  // The victim has an open redirect, as many sites do.
  await using victim = await startTestServer((request) => {
    const to = new URL(request.url).searchParams.get("to")!;
    return new Response(null, { status: 302, headers: { Location: to } });
  });
  victimOrigin = victim.url.origin;
  const keyId = new URL("/redirect", victim.url);
  const target = new URL("/key", attacker.url);
  keyId.searchParams.set("to", target.href);
  keyId.hash = "main-key";
  target.searchParams.set("key", keyId.href);
  keyId.searchParams.set("to", target.href);
  const fetchKey = createPublicKeyFetcher({ kv: new MemoryKvStore(), documentLoader });
  assertEquals(await fetchKey(keyId), null);
  // The forged document was served: the refusal is about where it came from.
  assertEquals(attacker.requests.length, 1);
});

test("a key document served as text/plain (an uploaded file) is not believed", async () => {
  await using victim = await startTestServer((request) => {
    const keyId = new URL(request.url);
    keyId.hash = "main-key";
    return new Response(JSON.stringify(forgedKey(keyId, new URL("/users/alice", keyId))), {
      headers: { "Content-Type": "text/plain" },
    });
  });
  const keyId = new URL("/uploads/evil.json#main-key", victim.url);
  const fetchKey = createPublicKeyFetcher({ kv: new MemoryKvStore(), documentLoader });
  assertEquals(await fetchKey(keyId), null);
  assertEquals(victim.requests.length, 1);
});

test("a key document served by its own origin as JSON-LD is believed", async () => {
  await using server = await startTestServer((request) => {
    const keyId = new URL(request.url);
    keyId.hash = "main-key";
    return Response.json(forgedKey(keyId, new URL("/users/alice", keyId)), {
      headers: { "Content-Type": "application/activity+json" },
    });
  });
  const keyId = new URL("/keys/1#main-key", server.url);
  const fetchKey = createPublicKeyFetcher({ kv: new MemoryKvStore(), documentLoader });
  const key = await fetchKey(keyId);
  assert(key != null);
  assertEquals(key.owner?.href, new URL("/users/alice", server.url).href);
});
