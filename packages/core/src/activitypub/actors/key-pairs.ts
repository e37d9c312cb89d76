import { CryptographicKey, Multikey } from "@fedify/vocab";

/**
 * One of an actor's key pairs, in every form a Fedify application uses:
 * the ids, the raw keys, and the vocabulary objects to publish on the actor
 * (`publicKey: pairs[0].cryptographicKey`,
 * `assertionMethods: pairs.map((p) => p.multikey)`).
 * @since 0.2.0
 */
export interface ActorKeyPair extends CryptoKeyPair {
  /** The key's id: `actor#main-key` for the first, `actor#key-2`, … after. */
  readonly keyId: URL;
  /** The key as a `CryptographicKey` (for `publicKey`), owned by the actor. */
  readonly cryptographicKey: CryptographicKey;
  /** The key as a `Multikey` (for `assertionMethod`), `actor#multikey-1`, … */
  readonly multikey: Multikey;
}

/**
 * Builds the {@link ActorKeyPair}s of an actor from its key pairs, in order,
 * with Fedify's key ids: the first key is `#main-key`, the n-th `#key-n`,
 * and the n-th multikey `#multikey-n`.
 * @param actorUri The actor's URI.
 * @param keyPairs The actor's key pairs, as its key pairs dispatcher returns
 *                 them.
 * @returns The key pairs with their ids and vocabulary objects.
 * @since 0.2.0
 * @example
 * ```ts
 * import { buildActorKeyPairs, generateCryptoKeyPair } from "@fedwork/core";
 *
 * const pairs = await buildActorKeyPairs(new URL("https://example.com/users/alice"), [
 *   await generateCryptoKeyPair(),
 *   await generateCryptoKeyPair("Ed25519"),
 * ]);
 * console.log(pairs[0].keyId.href); // "https://example.com/users/alice#main-key"
 * ```
 */
export function buildActorKeyPairs(
  actorUri: URL,
  keyPairs: readonly CryptoKeyPair[],
): ActorKeyPair[] {
  return keyPairs.map(({ privateKey, publicKey }, index) => {
    const keyId = new URL(index === 0 ? "#main-key" : `#key-${index + 1}`, actorUri);
    return {
      keyId,
      privateKey,
      publicKey,
      cryptographicKey: new CryptographicKey({ id: keyId, owner: actorUri, publicKey }),
      multikey: new Multikey({
        id: new URL(`#multikey-${index + 1}`, actorUri),
        controller: actorUri,
        publicKey,
      }),
    };
  });
}
