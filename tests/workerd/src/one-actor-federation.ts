// The federation both sides of the workerd Follow/Accept test start from:
// an in-memory federation with one actor, its inbox and an RSA key pair.
// The Worker's side (inside/federation.ts) and the Node.js server
// (node-peer.ts) add their own inbox listener to it.  The address guard is
// opened for loopback, as in the other tests that federate over 127.0.0.1.
import { Person } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  generateCryptoKeyPair,
  MemoryKvStore,
} from "@fedwork/core";

/**
 * Creates a federation serving one actor at `/users/{identifier}` with an
 * inbox at `/users/{identifier}/inbox` (listeners still to be set) and a
 * new RSA key pair.  Call it inside a test or request: Workers forbid
 * random values at a module's top level.
 * @param identifier The actor's identifier; any other is not found.
 * @returns The federation.
 */
export async function oneActorFederation(identifier: string): Promise<Federation<void>> {
  const keyPair = await generateCryptoKeyPair();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
  });
  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, requested) => {
      if (requested !== identifier) return null;
      const [pair] = await ctx.getActorKeyPairs(requested);
      return new Person({
        id: ctx.getActorUri(requested),
        preferredUsername: requested,
        inbox: ctx.getInboxUri(requested),
        publicKey: pair.cryptographicKey,
      });
    })
    .setKeyPairsDispatcher((_ctx, requested) => requested === identifier ? [keyPair] : []);
  return federation;
}
