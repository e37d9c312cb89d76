/**
 * HTTP message signatures, both schemes (draft-cavage-http-signatures-12
 * and RFC 9421): signing, verifying, body digests and the public key cache.
 * @module
 * @since 0.2.0
 */
export {
  type AcceptSignatureComponent,
  type AcceptSignatureMember,
  type AcceptSignatureParameters,
  formatAcceptSignature,
  fulfillAcceptSignature,
  type FulfillAcceptSignatureResult,
  MAX_ACCEPT_SIGNATURE_COMPONENTS,
  MAX_ACCEPT_SIGNATURE_LENGTH,
  MAX_ACCEPT_SIGNATURE_MEMBERS,
  parseAcceptSignature,
  validateAcceptSignature,
} from "./accept-signature.ts";
export {
  checkContentDigestHeader,
  checkDigestHeader,
  createContentDigestHeader,
  createDigestHeader,
  type DigestCheck,
} from "./digest.ts";
export {
  createPublicKeyFetcher,
  doesKeyOwnerMatchActor,
  type FetchedPublicKey,
  type PublicKeyFetcher,
  type PublicKeyFetcherOptions,
} from "./key-cache.ts";
export { signRequest, type SignRequestOptions } from "./sign.ts";
export type { Rfc9421SignRequestOptions } from "./rfc9421.ts";
export type {
  HttpMessageSignaturesSpec,
  HttpMessageSignaturesSpecDeterminer,
  HttpSignatureSpec,
  SignatureAlgorithm,
} from "./spec.ts";
export type { SignatureFailure, SignatureFailureReason } from "./verification.ts";
export {
  type VerifiedSignature,
  verifyRequest,
  type VerifyRequestOptions,
  type VerifyRequestResult,
} from "./verify.ts";
