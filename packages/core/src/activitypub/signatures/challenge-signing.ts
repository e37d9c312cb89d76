import { getLogger } from "@logtape/logtape";
import {
  type AcceptSignatureMember,
  fulfillAcceptSignature,
  parseAcceptSignature,
  validateAcceptSignature,
} from "./accept-signature.ts";
import { signHeadersRfc9421 } from "./rfc9421.ts";
import type { SignableMessage, SignedBody } from "./signed-body.ts";
import { signatureAlgorithmOf } from "./spec.ts";

const logger = getLogger(["fedwork", "activitypub", "signatures"]);

/**
 * The members of an `Accept-Signature` challenge (a refusal's header) that
 * a key can fulfil, parsed within bounds.  Internal.
 * @param header The header's value, or `null` when the refusal had none.
 * @param keyId The signing key's id.
 * @param privateKey The signing key.
 * @returns The members to sign for; empty when there are none.
 */
export function challengeMembers(
  header: string | null,
  keyId: URL,
  privateKey: CryptoKey,
): AcceptSignatureMember[] {
  if (header == null) return [];
  const algorithm = signatureAlgorithmOf(privateKey);
  if (algorithm == null) return [];
  return validateAcceptSignature(parseAcceptSignature(header)).filter((member) =>
    fulfillAcceptSignature(member, keyId.href, algorithm) != null
  );
}

/**
 * Signs a message once per challenge member, each signature with the
 * member's label, components, nonce, tag and `expires`; a member Fedwork
 * cannot sign for (a component with parameters, one the request lacks) is
 * skipped with a debug line.  Internal.
 * @returns How many members were signed for; with none, the message has no
 *          RFC 9421 signature from this call.
 */
export async function signForChallenge(
  message: SignableMessage,
  privateKey: CryptoKey,
  keyId: URL,
  body: SignedBody | null,
  nowMs: number,
  members: readonly AcceptSignatureMember[],
): Promise<number> {
  const algorithm = signatureAlgorithmOf(privateKey);
  if (algorithm == null) return 0;
  message.headers.delete("Signature-Input");
  message.headers.delete("Signature");
  let signed = 0;
  for (const member of members) {
    const options = fulfillAcceptSignature(member, keyId.href, algorithm);
    if (options == null) continue;
    try {
      await signHeadersRfc9421(message, privateKey, keyId, body, nowMs, options, signed > 0);
      signed++;
    } catch (error) {
      logger.debug("Cannot fulfil the Accept-Signature member {label}: {message}", {
        label: member.label,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return signed;
}
