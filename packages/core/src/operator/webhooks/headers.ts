// The checks on a webhook's extra headers and retry policy: both arrive
// from `addWebhook()` and are stored, so they are checked once, there.
import { durationToMilliseconds } from "../../time/duration.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import type { WebhookRetryPolicy } from "./types.ts";

/** At most this many extra headers per webhook. */
const MAX_HEADERS = 32;
/** The longest value of an extra header, in characters. */
const MAX_HEADER_VALUE = 4096;
/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/;
/** Headers Fedwork sets itself, which an extra header may not replace. */
const RESERVED = new Set([
  "content-type",
  "content-length",
  "host",
  "user-agent",
  "traceparent",
  "tracestate",
  "transfer-encoding",
  "connection",
]);

/**
 * Checks `addWebhook()`'s `headers`; the error names the header but never
 * quotes a value.
 * @param headers The value given.
 * @returns A plain copy, or `undefined` when none were given.
 * @throws {TypeError} When it is not an object of string values, has too
 *         many entries, or a name or value is not allowed.
 */
export function checkWebhookHeaders(headers: unknown): Record<string, string> | undefined {
  if (headers == null) return undefined;
  if (typeof headers !== "object" || Array.isArray(headers)) {
    throw new TypeError("The headers of addWebhook() must be an object of header names to values.");
  }
  const entries = Object.entries(headers as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) {
    throw new TypeError(`The headers of addWebhook() may hold at most ${MAX_HEADERS} headers.`);
  }
  const checked: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) {
      throw new TypeError(`The header name ${JSON.stringify(name)} of addWebhook() is not valid.`);
    }
    if (RESERVED.has(lower) || lower.startsWith("fedwork-webhook-")) {
      throw new TypeError(
        `The header ${name} of addWebhook() is set by Fedwork and cannot be replaced.`,
      );
    }
    if (seen.has(lower)) {
      throw new TypeError(`The header ${name} of addWebhook() is given twice.`);
    }
    seen.add(lower);
    // The value is secret-like: the messages below say what is wrong
    // without repeating it.
    if (typeof value !== "string") {
      throw new TypeError(`The value of the header ${name} of addWebhook() must be a string.`);
    }
    if (value.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(value)) {
      throw new TypeError(
        `The value of the header ${name} of addWebhook() must be at most ` +
          `${MAX_HEADER_VALUE} characters without line breaks.`,
      );
    }
    checked[name] = value;
  }
  return checked;
}

/** A webhook retry policy as stored: plain numbers. */
export interface StoredWebhookRetryPolicy {
  readonly maxAttempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Checks `addWebhook()`'s `retryPolicy` and fills in its defaults.
 * @param policy The value given.
 * @returns The stored form, or `undefined` when none was given.
 * @throws {TypeError} When it is not an object or a field is invalid.
 * @throws {UnknownOptionError} When it holds a name it does not know.
 */
export function checkWebhookRetryPolicy(policy: unknown): StoredWebhookRetryPolicy | undefined {
  if (policy == null) return undefined;
  if (typeof policy !== "object" || Array.isArray(policy)) {
    throw new TypeError(
      "The retryPolicy of addWebhook() must be an object { maxAttempts, initialDelay, " +
        "maxDelay }; a webhook is stored, so its policy is data, not a function.",
    );
  }
  assertKnownOptions(policy, ["maxAttempts", "initialDelay", "maxDelay"], {
    where: "addWebhook()'s retryPolicy",
  });
  const { maxAttempts = 10, initialDelay, maxDelay } = policy as WebhookRetryPolicy;
  if (typeof maxAttempts !== "number" || !Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new TypeError("The retryPolicy.maxAttempts of addWebhook() must be a positive integer.");
  }
  const initialDelayMs = initialDelay == null
    ? 1000
    : durationToMilliseconds(initialDelay, "retryPolicy.initialDelay");
  const maxDelayMs = maxDelay == null
    ? 3_600_000
    : durationToMilliseconds(maxDelay, "retryPolicy.maxDelay");
  if (!(initialDelayMs >= 0) || !(maxDelayMs >= initialDelayMs)) {
    throw new TypeError(
      "The retryPolicy of addWebhook() needs 0 <= initialDelay <= maxDelay.",
    );
  }
  return { maxAttempts, initialDelayMs, maxDelayMs };
}

/**
 * The delay before the next attempt under a stored webhook retry policy:
 * exponential from the initial delay, capped, with ±50 % jitter (never
 * beyond the cap).
 * @param policy The stored policy.
 * @param failedAttempts How many attempts have failed so far (1 after the
 *                       first).
 * @returns The delay in milliseconds, or `null` when the policy gives up.
 */
export function webhookRetryDelayMs(
  policy: StoredWebhookRetryPolicy,
  failedAttempts: number,
): number | null {
  if (failedAttempts >= policy.maxAttempts) return null;
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (failedAttempts - 1));
  return Math.min(policy.maxDelayMs, Math.round(base * (0.5 + Math.random())));
}
