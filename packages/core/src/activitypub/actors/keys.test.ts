import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { exportJwk, generateCryptoKeyPair, importJwk } from "./keys.ts";
import { exportSpki, importPem, importSpki } from "./mod.ts";

test("generateCryptoKeyPair() makes a 2048-bit RSA SHA-256 key pair by default", async () => {
  const { privateKey, publicKey } = await generateCryptoKeyPair();
  const algorithm = publicKey.algorithm as RsaHashedKeyAlgorithm;
  assertEquals([algorithm.name, algorithm.modulusLength, algorithm.hash.name], [
    "RSASSA-PKCS1-v1_5",
    2048,
    "SHA-256",
  ]);
  assertEquals([privateKey.type, publicKey.type], ["private", "public"]);
});

test("exportJwk() and importJwk() round-trip RSA and Ed25519 keys that still sign and verify", async () => {
  const data = new TextEncoder().encode("payload");
  for (const algorithm of ["RSASSA-PKCS1-v1_5", "Ed25519"] as const) {
    const pair = await generateCryptoKeyPair(algorithm);
    const privateKey = await importJwk(await exportJwk(pair.privateKey), "private");
    const publicKey = await importJwk(await exportJwk(pair.publicKey), "public");
    const signature = await crypto.subtle.sign(algorithm, privateKey, data);
    assertEquals(await crypto.subtle.verify(algorithm, publicKey, signature, data), true);
    assertEquals(await exportJwk(publicKey), await exportJwk(pair.publicKey));
  }
});

test("importJwk() rejects key types other than RSA and Ed25519", async () => {
  await assertRejects(
    () => importJwk({ kty: "EC", crv: "P-256", x: "", y: "" }, "public"),
    TypeError,
    "EC",
  );
});

test("exportSpki(), importSpki() and importPem() carry a public key through PEM, as in Fedify", async () => {
  const data = new TextEncoder().encode("payload");
  for (const algorithm of ["RSASSA-PKCS1-v1_5", "Ed25519"] as const) {
    const pair = await generateCryptoKeyPair(algorithm);
    const pem = await exportSpki(pair.publicKey);
    assertEquals(pem.startsWith("-----BEGIN PUBLIC KEY-----"), true);
    const signature = await crypto.subtle.sign(algorithm, pair.privateKey, data);
    for (const key of [await importSpki(pem), await importPem(pem)]) {
      assertEquals(await crypto.subtle.verify(algorithm, key, signature, data), true);
      assertEquals(await exportJwk(key), await exportJwk(pair.publicKey));
    }
  }
});
