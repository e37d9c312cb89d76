import type { RetryPolicy } from "../../retry/retry-policy.ts";
import type { DurationInput } from "../../time/duration.ts";
import type { Webhook } from "./types.ts";
import {
  checkFederationOption,
  FederationOptionError,
} from "../../options/federation-option-error.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";

/**
 * How the federation sends webhooks (the `webhooks` option).
 * @since 0.2.0
 */
export interface FederationWebhookOptions {
  /**
   * After how many failed requests in a row a webhook is disabled; a
   * success resets the count.  A positive integer.
   * @default `10`
   */
  readonly disableAfterFailures?: number;
  /**
   * Called once when a webhook is disabled, in the process that disabled
   * it.  A callback that throws is logged.
   */
  readonly onDisabled?: (webhook: Webhook) => void | Promise<void>;
  /**
   * How long one request may take before it counts as failed.
   * @default `{ seconds: 10 }`
   */
  readonly timeout?: DurationInput;
  /**
   * When a failed request is tried again.  The federation's
   * `taskRetryPolicy` by default.
   */
  readonly retryPolicy?: RetryPolicy;
  /**
   * How long after a webhook is disabled it is first probed: the request
   * that disabled it is sent again, and a 2xx answer enables the webhook.
   * Each failed probe doubles the wait, up to `probeMaxDelay`.
   * @default `{ minutes: 1 }`
   * @since 0.3.0
   */
  readonly probeInitialDelay?: DurationInput;
  /**
   * The longest wait between two probes of a disabled webhook.
   * @default `{ hours: 6 }`
   * @since 0.3.0
   */
  readonly probeMaxDelay?: DurationInput;
}

/**
 * The federation's `webhooks` option checked, with defaults.  Internal.
 * @since 0.2.0
 */
export interface ResolvedWebhookOptions {
  readonly disableAfterFailures: number;
  readonly onDisabled?: (webhook: Webhook) => void | Promise<void>;
  readonly timeoutMs: number;
  readonly retryPolicy?: RetryPolicy;
  readonly probeInitialDelayMs: number;
  readonly probeMaxDelayMs: number;
}

/**
 * Checks the `webhooks` option.
 * @param options The option's value.
 * @returns The resolved options.
 * @throws {FederationOptionError} When a field is invalid.
 */
export function resolveWebhookOptions(
  options: FederationWebhookOptions | undefined,
): ResolvedWebhookOptions {
  if (options != null && typeof options !== "object") {
    throw new FederationOptionError("webhooks", "The webhooks option must be an object.");
  }
  const disableAfterFailures = checkFederationOption(
    "webhooks.disableAfterFailures",
    () =>
      positiveIntegerOption(
        options?.disableAfterFailures ?? undefined,
        "webhooks.disableAfterFailures",
        10,
      ),
  );
  if (options?.onDisabled != null && typeof options.onDisabled !== "function") {
    throw new FederationOptionError(
      "webhooks.onDisabled",
      "The webhooks.onDisabled option must be a function.",
    );
  }
  if (options?.retryPolicy != null && typeof options.retryPolicy !== "function") {
    throw new FederationOptionError(
      "webhooks.retryPolicy",
      "The webhooks.retryPolicy option must be a retry policy function, e.g. " +
        "createExponentialBackoffPolicy().",
    );
  }
  const timeoutMs = checkFederationOption(
    "webhooks.timeout",
    () => positiveDurationOption(options?.timeout ?? undefined, "webhooks.timeout", 10_000),
  );
  const probeInitialDelayMs = checkFederationOption(
    "webhooks.probeInitialDelay",
    () =>
      positiveDurationOption(
        options?.probeInitialDelay ?? undefined,
        "webhooks.probeInitialDelay",
        60_000,
      ),
  );
  const probeMaxDelayMs = checkFederationOption(
    "webhooks.probeMaxDelay",
    () =>
      positiveDurationOption(
        options?.probeMaxDelay ?? undefined,
        "webhooks.probeMaxDelay",
        6 * 3_600_000,
      ),
  );
  if (probeMaxDelayMs < probeInitialDelayMs) {
    throw new FederationOptionError(
      "webhooks.probeMaxDelay",
      "The webhooks.probeMaxDelay option must not be shorter than webhooks.probeInitialDelay.",
    );
  }
  return {
    disableAfterFailures,
    probeInitialDelayMs,
    probeMaxDelayMs,
    ...(options?.onDisabled == null ? {} : { onDisabled: options.onDisabled }),
    timeoutMs,
    ...(options?.retryPolicy == null ? {} : { retryPolicy: options.retryPolicy }),
  };
}
