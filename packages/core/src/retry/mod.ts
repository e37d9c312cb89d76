export type { RetryContext, RetryPolicy } from "./retry-policy.ts";
