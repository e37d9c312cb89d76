import { assertEquals, assertThrows, test } from "@fedify/fixture";
import {
  nonNegativeIntegerOption,
  positiveDurationOption,
  positiveIntegerOption,
} from "../options/value-options.ts";
import { resolveLeaseOptions } from "./lease-options.ts";

const defaults = { prefetch: 8, leaseMs: 30_000, pollMs: 1_000 };

test("resolveLeaseOptions fills in the defaults", () => {
  assertEquals(resolveLeaseOptions({}, defaults), {
    concurrency: 1,
    prefetch: 8,
    maxPrefetch: 8,
    leaseMs: 30_000,
    pollMs: 1_000,
    heartbeatMs: 10_000,
  });
  assertEquals(
    resolveLeaseOptions({
      concurrency: 4,
      prefetch: 0,
      leaseTime: { seconds: 9 },
      pollInterval: "PT2S",
      heartbeatInterval: { seconds: 1 },
    }, defaults),
    {
      concurrency: 4,
      prefetch: 0,
      maxPrefetch: 0,
      leaseMs: 9_000,
      pollMs: 2_000,
      heartbeatMs: 1_000,
    },
  );
});

test("resolveLeaseOptions lets the prefetch grow to the backend's maxPrefetch, or the user's", () => {
  const growing = { ...defaults, maxPrefetch: 256 };
  assertEquals(resolveLeaseOptions({}, growing).maxPrefetch, 256);
  assertEquals(resolveLeaseOptions({ prefetch: 512 }, growing).maxPrefetch, 512);
  assertEquals(resolveLeaseOptions({ maxPrefetch: 8 }, growing).maxPrefetch, 8);
  assertEquals(resolveLeaseOptions({ prefetch: 0, maxPrefetch: 0 }, growing).maxPrefetch, 0);
  assertThrows(
    () => resolveLeaseOptions({ prefetch: 32, maxPrefetch: 8 }, growing),
    RangeError,
    "The maxPrefetch option (8) must be at least the prefetch option (32)",
  );
  assertThrows(
    () => resolveLeaseOptions({ maxPrefetch: -2 }, growing),
    RangeError,
    "The maxPrefetch option must be a non-negative integer; got -2.",
  );
});

test("resolveLeaseOptions names the option in every error", () => {
  assertThrows(
    () => resolveLeaseOptions({ concurrency: 0 }, defaults),
    RangeError,
    "The concurrency option must be a positive integer; got 0.",
  );
  assertThrows(
    () => resolveLeaseOptions({ concurrency: 1.5 }, defaults),
    RangeError,
    "The concurrency option must be a positive integer; got 1.5.",
  );
  assertThrows(
    () => resolveLeaseOptions({ prefetch: -1 }, defaults),
    RangeError,
    "The prefetch option must be a non-negative integer; got -1.",
  );
  assertThrows(
    // deno-lint-ignore no-explicit-any
    () => resolveLeaseOptions({ prefetch: "4" as any }, defaults),
    RangeError,
    'The prefetch option must be a non-negative integer; got "4".',
  );
  assertThrows(
    () => resolveLeaseOptions({ leaseTime: { seconds: 0 } }, defaults),
    RangeError,
    "The leaseTime option must be a positive duration",
  );
  assertThrows(
    () => resolveLeaseOptions({ leaseTime: { seconds: -1 } }, defaults),
    RangeError,
    "The leaseTime option must be a positive duration",
  );
  assertThrows(
    // deno-lint-ignore no-explicit-any
    () => resolveLeaseOptions({ pollInterval: "soon" as any }, defaults),
    TypeError,
    "The pollInterval option",
  );
  assertThrows(
    () =>
      resolveLeaseOptions(
        { leaseTime: { seconds: 3 }, heartbeatInterval: { seconds: 3 } },
        defaults,
      ),
    RangeError,
    "The heartbeatInterval option (3000 ms) must be shorter than the leaseTime option",
  );
});

test("the single-option checks take the default for undefined", () => {
  assertEquals(positiveIntegerOption(undefined, "workers", 2), 2);
  assertEquals(nonNegativeIntegerOption(undefined, "prefetch", 0), 0);
  assertEquals(positiveDurationOption(undefined, "leaseTime", 5), 5);
  assertThrows(
    () => positiveDurationOption({ days: 30 }, "leaseTime", 5),
    RangeError,
    "The leaseTime option must be a positive duration of at most about 24 days",
  );
});
