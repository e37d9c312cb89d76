import { assert, assertEquals, assertStrictEquals, assertThrows, test } from "@fedify/fixture";
import { Temporal } from "@js-temporal/polyfill";
import { durationToMilliseconds } from "../time/duration.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { createExponentialBackoffPolicy } from "./exponential-backoff.ts";
import type { ExponentialBackoffPolicyOptions } from "./exponential-backoff.ts";
import type { RetryPolicy } from "./retry-policy.ts";

const elapsedTime = Temporal.Duration.from({ seconds: 0 });

/** The delays the policy asks for after 1, 2, … failed attempts, in ms. */
function delays(policy: RetryPolicy, upTo: number): (number | null)[] {
  const result: (number | null)[] = [];
  for (let attempts = 1; attempts <= upTo; attempts++) {
    const delay = policy({ attempts, elapsedTime });
    result.push(delay == null ? null : durationToMilliseconds(delay));
  }
  return result;
}

test("createExponentialBackoffPolicy doubles the delay from one second by default", () => {
  const policy = createExponentialBackoffPolicy({ jitter: false });
  assertEquals(delays(policy, 5), [1_000, 2_000, 4_000, 8_000, 16_000]);
});

test("createExponentialBackoffPolicy gives up after ten failed attempts by default", () => {
  const policy = createExponentialBackoffPolicy({ jitter: false });
  const sequence = delays(policy, 11);
  assertEquals(sequence.slice(0, 9), [1, 2, 4, 8, 16, 32, 64, 128, 256].map((s) => s * 1_000));
  assertEquals(sequence.slice(9), [null, null]);
});

test("createExponentialBackoffPolicy follows initialDelay, factor and maxAttempts", () => {
  const policy = createExponentialBackoffPolicy({
    initialDelay: { milliseconds: 100 },
    factor: 3,
    maxAttempts: 4,
    jitter: false,
  });
  assertEquals(delays(policy, 5), [100, 300, 900, null, null]);
});

test("createExponentialBackoffPolicy caps delays at maxDelay", () => {
  const policy = createExponentialBackoffPolicy({
    initialDelay: { seconds: 1 },
    maxDelay: { seconds: 5 },
    maxAttempts: 1_000,
    jitter: false,
  });
  assertEquals(delays(policy, 5), [1_000, 2_000, 4_000, 5_000, 5_000]);
  // Very large exponents overflow to Infinity and must still be capped.
  const late = policy({ attempts: 999, elapsedTime });
  assertEquals(late == null ? null : durationToMilliseconds(late), 5_000);
});

test("createExponentialBackoffPolicy caps the default delays at twelve hours", () => {
  const policy = createExponentialBackoffPolicy({ maxAttempts: 100, jitter: false });
  const delay = policy({ attempts: 50, elapsedTime });
  assertEquals(delay?.toString(), "PT12H");
});

test("createExponentialBackoffPolicy with factor 1 keeps a constant delay", () => {
  const policy = createExponentialBackoffPolicy({
    initialDelay: { seconds: 7 },
    factor: 1,
    maxAttempts: 4,
    jitter: false,
  });
  assertEquals(delays(policy, 4), [7_000, 7_000, 7_000, null]);
});

test("createExponentialBackoffPolicy with maxAttempts 1 never retries", () => {
  const policy = createExponentialBackoffPolicy({ maxAttempts: 1 });
  assertStrictEquals(policy({ attempts: 1, elapsedTime }), null);
});

test("createExponentialBackoffPolicy with a zero initialDelay retries at once", () => {
  const policy = createExponentialBackoffPolicy({
    initialDelay: { seconds: 0 },
    maxAttempts: 2_000,
    jitter: false,
  });
  assertEquals(delays(policy, 3), [0, 0, 0]);
  const late = policy({ attempts: 1_500, elapsedTime });
  assertEquals(late == null ? null : durationToMilliseconds(late), 0);
});

test("createExponentialBackoffPolicy keeps jittered delays within ±50 % and maxDelay", () => {
  const policy = createExponentialBackoffPolicy({
    initialDelay: { seconds: 1 },
    maxDelay: { seconds: 6 },
    maxAttempts: 20,
  });
  for (let round = 0; round < 200; round++) {
    for (let attempts = 1; attempts <= 6; attempts++) {
      const delay = policy({ attempts, elapsedTime });
      assert(delay != null);
      const ms = durationToMilliseconds(delay);
      const base = Math.min(1_000 * 2 ** (attempts - 1), 6_000);
      assert(ms >= base / 2, `attempt ${attempts}: ${ms} ms is below ${base / 2} ms`);
      assert(
        ms <= Math.min(base * 1.5, 6_000),
        `attempt ${attempts}: ${ms} ms is above ${Math.min(base * 1.5, 6_000)} ms`,
      );
    }
  }
});

test("createExponentialBackoffPolicy jitters by default", () => {
  const policy = createExponentialBackoffPolicy();
  const seen = new Set<number>();
  for (let i = 0; i < 50; i++) {
    seen.add(durationToMilliseconds(policy({ attempts: 3, elapsedTime })!));
  }
  // Fifty equal draws from a 4-second range would be astronomically unlikely.
  assert(seen.size > 1, "the default policy returned the same delay every time");
});

test("createExponentialBackoffPolicy rejects a negative delay naming the option", () => {
  assertThrows(
    () => createExponentialBackoffPolicy({ initialDelay: { seconds: -1 } }),
    RangeError,
    "initialDelay",
  );
  assertThrows(
    () => createExponentialBackoffPolicy({ maxDelay: { seconds: -1 } }),
    RangeError,
    "maxDelay",
  );
});

test("createExponentialBackoffPolicy rejects a maxDelay shorter than initialDelay", () => {
  assertThrows(
    () =>
      createExponentialBackoffPolicy({
        initialDelay: { minutes: 2 },
        maxDelay: { minutes: 1 },
      }),
    RangeError,
    "maxDelay",
  );
});

test("createExponentialBackoffPolicy rejects maxAttempts that is not a positive integer", () => {
  for (const maxAttempts of [0, -3, 2.5, Number.NaN]) {
    assertThrows(
      () => createExponentialBackoffPolicy({ maxAttempts }),
      RangeError,
      "maxAttempts",
    );
  }
  assertThrows(
    () => createExponentialBackoffPolicy({ maxAttempts: "3" as unknown as number }),
    TypeError,
    "maxAttempts",
  );
});

test("createExponentialBackoffPolicy rejects a factor below 1", () => {
  for (const factor of [0.5, 0, -2, Number.NaN, Number.POSITIVE_INFINITY]) {
    assertThrows(() => createExponentialBackoffPolicy({ factor }), RangeError, "factor");
  }
});

test("createExponentialBackoffPolicy() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () => createExponentialBackoffPolicy({ maxAttemps: 3 } as ExponentialBackoffPolicyOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "maxAttemps");
  assertEquals(
    error.message,
    "Unknown option maxAttemps of createExponentialBackoffPolicy(); did you mean maxAttempts? " +
      "The options are factor, initialDelay, jitter, maxAttempts, maxDelay.",
  );
});
