/**
 * The HTTP message signature schemes Fedwork signs and verifies, named as
 * Fedify names them: the Cavage draft that Mastodon has always used, and
 * RFC 9421.
 * @since 0.2.0
 */
export type HttpSignatureSpec = "draft-cavage-http-signatures-12" | "rfc9421";

/**
 * Fedify's name for {@link HttpSignatureSpec}, so that an app ported from
 * Fedify type-checks with its imports changed only.
 * @since 0.3.0
 */
export type HttpMessageSignaturesSpec = HttpSignatureSpec;

/**
 * Chooses the signature scheme to try first with an origin and remembers
 * the one that worked (the double knock), Fedify's interface of the same
 * name: pass one as `deliverSignedActivity()`'s `specDeterminer` to keep
 * that memory elsewhere than the KV store.
 * @since 0.4.0
 */
export interface HttpMessageSignaturesSpecDeterminer {
  /**
   * The scheme to sign a request to `origin` with first.
   * @param origin The origin requested, e.g. `https://remote.example`.
   * @returns The scheme.
   */
  determineSpec(origin: string): HttpSignatureSpec | Promise<HttpSignatureSpec>;
  /**
   * Remembers the scheme `origin` accepted.
   * @param origin The origin requested.
   * @param spec The scheme it accepted.
   */
  rememberSpec(origin: string, spec: HttpSignatureSpec): void | Promise<void>;
}

/**
 * The signature algorithms Fedwork verifies, in RFC 9421's names:
 * RSASSA-PKCS1-v1_5 with SHA-256 (`rsa-sha256` in the Cavage draft) and
 * Ed25519.
 * @since 0.2.0
 */
export type SignatureAlgorithm = "rsa-v1_5-sha256" | "ed25519";

/**
 * Returns the other signature scheme: the one a double knock retries with.
 * @param spec A scheme.
 * @returns The other scheme.
 * @since 0.2.0
 */
export function otherHttpSignatureSpec(spec: HttpSignatureSpec): HttpSignatureSpec {
  return spec === "rfc9421" ? "draft-cavage-http-signatures-12" : "rfc9421";
}

/**
 * Tells which signature algorithm a key signs with.
 * @param key A CryptoKey.
 * @returns The algorithm, or `null` when Fedwork does not sign or verify
 *          HTTP messages with that kind of key.
 * @since 0.2.0
 */
export function signatureAlgorithmOf(key: CryptoKey): SignatureAlgorithm | null {
  if (key.algorithm.name === "Ed25519") return "ed25519";
  if (
    key.algorithm.name === "RSASSA-PKCS1-v1_5" &&
    (key.algorithm as RsaHashedKeyAlgorithm).hash?.name === "SHA-256"
  ) {
    return "rsa-v1_5-sha256";
  }
  return null;
}

/** Signs `data` with a key whose algorithm {@link signatureAlgorithmOf} knows. */
export async function signBytes(
  privateKey: CryptoKey,
  data: Uint8Array,
): Promise<Uint8Array<ArrayBuffer>> {
  const algorithm = signatureAlgorithmOf(privateKey);
  if (algorithm == null) {
    throw new TypeError(
      `Cannot sign HTTP messages with a ${privateKey.algorithm.name} key; use an ` +
        "RSASSA-PKCS1-v1_5 (SHA-256) or Ed25519 key.",
    );
  }
  return new Uint8Array(
    await crypto.subtle.sign(
      privateKey.algorithm.name,
      privateKey,
      data as Uint8Array<ArrayBuffer>,
    ),
  );
}

/**
 * Checks a signature with a public key, the algorithm named by the
 * signature (if any) having to agree with the key.
 */
export async function verifyBytes(
  publicKey: CryptoKey,
  algorithm: SignatureAlgorithm | null,
  data: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  const keyAlgorithm = signatureAlgorithmOf(publicKey);
  if (keyAlgorithm == null || (algorithm != null && algorithm !== keyAlgorithm)) return false;
  try {
    return await crypto.subtle.verify(
      publicKey.algorithm.name,
      publicKey,
      signature as Uint8Array<ArrayBuffer>,
      data as Uint8Array<ArrayBuffer>,
    );
  } catch {
    return false;
  }
}
