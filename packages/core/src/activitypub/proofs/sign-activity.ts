import { getLogger } from "@logtape/logtape";
import type { ActorKeyPair } from "../actors/key-pairs.ts";
import { signJsonLd } from "./ld-signature.ts";
import { hasProof, signObject } from "./proof.ts";
import { messageOf } from "../json-values.ts";

const logger = getLogger(["fedwork", "activitypub", "proofs"]);

/**
 * Puts on a serialized activity the signatures Fedify puts on what it
 * sends, so that receivers can trust it when a third server forwards it:
 * an Object Integrity Proof made with the sender's first Ed25519 key pair,
 * naming its multikey id (`actor#multikey-n`, listed in the actor's
 * `assertionMethod`), then a Linked Data signature (`RsaSignature2017`)
 * made with its first RSA key pair (`actor#main-key`) over the proved
 * activity, which is what Mastodon verifies.  Each is skipped when the
 * activity carries one already or the sender has no such key; an activity
 * that names a JSON-LD context Fedwork does not preload goes without the
 * Linked Data signature.  Internal.
 * @param activity The serialized activity.
 * @param pairs The sender's key pairs.
 * @returns The signed activity (a copy), or the activity as it was.
 * @since 0.3.0
 */
export async function signActivityObject(
  activity: Readonly<Record<string, unknown>>,
  pairs: readonly ActorKeyPair[],
): Promise<Readonly<Record<string, unknown>>> {
  const ed25519 = pairs.find((pair) => pair.privateKey.algorithm.name === "Ed25519");
  if (!hasProof(activity) && ed25519?.multikey.id != null) {
    activity = await signObject(activity, {
      privateKey: ed25519.privateKey,
      keyId: ed25519.multikey.id,
    });
  }
  const rsa = pairs.find((pair) => pair.privateKey.algorithm.name === "RSASSA-PKCS1-v1_5");
  if (activity.signature === undefined && rsa != null) {
    try {
      activity = await signJsonLd(activity, rsa.privateKey, rsa.keyId);
    } catch (error) {
      logger.debug("Sending {activityId} without a Linked Data signature: {message}", {
        activityId: activity.id,
        message: messageOf(error),
      });
    }
  }
  return activity;
}
