/**
 * Object Integrity Proofs (FEP-8b32, the `eddsa-jcs-2022` cryptosuite):
 * making and verifying the Ed25519 proofs that let an activity be trusted
 * whoever delivers it.
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
