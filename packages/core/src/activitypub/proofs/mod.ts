/**
 * Signatures on objects, which let an activity be trusted whoever delivers
 * it: Object Integrity Proofs (FEP-8b32, the `eddsa-jcs-2022` cryptosuite,
 * Ed25519) and Linked Data Signatures (`RsaSignature2017`, RSA), made and
 * verified.
 * @module
 * @since 0.3.0
 */
export {
  createProof,
  type CreateProofOptions,
  type DataIntegrityProof,
  MAX_PROOFS_PER_OBJECT,
  type ObjectVerification,
  type ProofFailure,
  type ProofFailureReason,
  type ProofVerification,
  signObject,
  verifyObject,
  verifyProof,
  type VerifyProofOptions,
} from "./proof.ts";
export {
  type LdSignatureFailureReason,
  type LdSignatureVerification,
  type LinkedDataSignature,
  signJsonLd,
  type SignJsonLdOptions,
  verifyJsonLd,
  verifyLdSignature,
} from "./ld-signature.ts";
