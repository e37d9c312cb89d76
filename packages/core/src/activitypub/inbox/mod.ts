/**
 * Incoming activities: verifying an inbox request before it is trusted.
 * @module
 * @since 0.2.0
 */
export {
  DEFAULT_MAX_INBOX_BODY_SIZE,
  type InboxRejectionReason,
  type InboxVerification,
  verifyInboxRequest,
  type VerifyInboxRequestOptions,
} from "./verify.ts";
