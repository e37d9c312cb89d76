/**
 * The key algorithms actors use: RSASSA-PKCS1-v1_5 with SHA-256 for HTTP
 * signatures (what Mastodon verifies), Ed25519 for object proofs.
 * @since 0.2.0
 */
export type KeyAlgorithm = "RSASSA-PKCS1-v1_5" | "Ed25519";

/**
 * Generates an extractable key pair for an actor.
 * @param algorithm `"RSASSA-PKCS1-v1_5"` (a 2048-bit RSA key with SHA-256;
 *                  the default) or `"Ed25519"`.  2048 bits is what Mastodon
 *                  generates; signing with it costs about a sixth of a
 *                  4096-bit key, and signing bounds delivery throughput.
 * @returns The key pair.
 * @throws {TypeError} When the algorithm is not supported.
 * @since 0.2.0
 * @example
 * ```ts
 * import { exportJwk, generateCryptoKeyPair } from "@fedwork/core";
 *
 * const { privateKey, publicKey } = await generateCryptoKeyPair();
 * const stored = { privateKey: await exportJwk(privateKey), publicKey: await exportJwk(publicKey) };
 * ```
 */
export async function generateCryptoKeyPair(
  algorithm: KeyAlgorithm = "RSASSA-PKCS1-v1_5",
): Promise<CryptoKeyPair> {
  if (algorithm === "RSASSA-PKCS1-v1_5") {
    return await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 2048,
        publicExponent: new Uint8Array([0x01, 0x00, 0x01]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    );
  }
  if (algorithm === "Ed25519") {
    return await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"]) as CryptoKeyPair;
  }
  throw new TypeError(
    `Unsupported key algorithm ${JSON.stringify(algorithm)}; use "RSASSA-PKCS1-v1_5" or "Ed25519".`,
  );
}

/**
 * Exports a key as a JSON Web Key, e.g. to store it.
 * @param key An extractable RSASSA-PKCS1-v1_5 or Ed25519 key.
 * @returns The JWK.
 * @throws {TypeError} When the key's algorithm is not supported.
 * @since 0.2.0
 */
export async function exportJwk(key: CryptoKey): Promise<JsonWebKey> {
  algorithmOf(key.algorithm.name);
  return await crypto.subtle.exportKey("jwk", key);
}

/**
 * Imports a JSON Web Key exported by {@link exportJwk}.
 * @param jwk The JWK: `kty: "RSA"` (imported as RSASSA-PKCS1-v1_5 with
 *            SHA-256) or `kty: "OKP", crv: "Ed25519"`.
 * @param type Whether the JWK holds a `"public"` or a `"private"` key.
 * @returns The key: extractable, usable to verify (public) or sign
 *          (private).
 * @throws {TypeError} When the JWK's key type is not supported.
 * @since 0.2.0
 */
export async function importJwk(jwk: JsonWebKey, type: "public" | "private"): Promise<CryptoKey> {
  const usages: KeyUsage[] = type === "public" ? ["verify"] : ["sign"];
  if (jwk.kty === "RSA") {
    return await crypto.subtle.importKey(
      "jwk",
      jwk,
      { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      true,
      usages,
    );
  }
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") {
    return await crypto.subtle.importKey("jwk", jwk, "Ed25519", true, usages);
  }
  throw new TypeError(
    `Unsupported JWK key type ${JSON.stringify(jwk.kty)}${
      jwk.crv == null ? "" : ` (curve ${jwk.crv})`
    }; use an RSA or Ed25519 key.`,
  );
}

function algorithmOf(name: string): KeyAlgorithm {
  if (name === "RSASSA-PKCS1-v1_5" || name === "Ed25519") return name;
  throw new TypeError(`Unsupported key algorithm ${name}; use RSASSA-PKCS1-v1_5 or Ed25519.`);
}
