/**
 * Incoming activities: verifying an inbox request before it is trusted.
 * @module
 * @since 0.2.0
 */
export {
  type InboxRejectionReason,
  type InboxVerification,
  verifyInboxRequest,
  type VerifyInboxRequestOptions,
} from "./verify.ts";
export type { InboxChallengePolicy } from "./challenge.ts";
export type { RouteActivityOptions } from "./route.ts";
