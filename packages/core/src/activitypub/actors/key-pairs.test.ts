import { assertEquals, test } from "@fedify/fixture";
import { buildActorKeyPairs } from "./key-pairs.ts";
import { generateCryptoKeyPair } from "./keys.ts";

test("buildActorKeyPairs() names keys #main-key, #key-2 and multikeys #multikey-n", async () => {
  const actor = new URL("https://example.com/users/alice");
  const pairs = await buildActorKeyPairs(actor, [
    await generateCryptoKeyPair(),
    await generateCryptoKeyPair("Ed25519"),
  ]);
  assertEquals(pairs.map((pair) => pair.keyId.href), [
    "https://example.com/users/alice#main-key",
    "https://example.com/users/alice#key-2",
  ]);
  assertEquals(pairs.map((pair) => pair.multikey.id?.href), [
    "https://example.com/users/alice#multikey-1",
    "https://example.com/users/alice#multikey-2",
  ]);
  assertEquals(pairs[0].cryptographicKey.ownerId?.href, actor.href);
  assertEquals(pairs[1].multikey.controllerId?.href, actor.href);
  const json = await pairs[0].cryptographicKey.toJsonLd({ format: "compact" }) as Record<
    string,
    unknown
  >;
  assertEquals(typeof json.publicKeyPem, "string");
});
