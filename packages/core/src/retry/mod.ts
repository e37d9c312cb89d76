export type { RetryContext, RetryPolicy } from "./retry-policy.ts";
export {
  createExponentialBackoffPolicy,
  type ExponentialBackoffPolicyOptions,
} from "./exponential-backoff.ts";
