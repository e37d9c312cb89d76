import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { resolveHostHealthOptions } from "./options.ts";

test("hostHealth's counts and durations are checked with the shared wording, naming the option", () => {
  const count = assertThrows(
    () => resolveHostHealthOptions({ failureThreshold: 0 }),
    FederationOptionError,
  );
  assertEquals(count.option, "hostHealth.failureThreshold");
  assertEquals(
    count.message,
    "The hostHealth.failureThreshold option must be a positive integer; got 0.",
  );
  const duration = assertThrows(
    () => resolveHostHealthOptions({ probeTimeout: { seconds: 0 } }),
    FederationOptionError,
  );
  assertEquals(duration.option, "hostHealth.probeTimeout");
  assertEquals(
    duration.message,
    "The hostHealth.probeTimeout option must be a positive duration of at most about 24 days; " +
      "got 0 ms.",
  );
  assertThrows(
    () => resolveHostHealthOptions({ parkedRetention: { seconds: 0 } }),
    FederationOptionError,
    "The hostHealth.parkedRetention option must be a positive duration; got 0 ms.",
  );
});

test("hostHealth's times to live are not bounded by what a timer holds", () => {
  const resolved = resolveHostHealthOptions({
    parkedRetention: { days: 30 },
    deadHostCooldown: { days: 60 },
  });
  assertEquals(resolved?.parkedRetentionMs, 30 * 86_400_000);
  assertEquals(resolved?.deadHostCooldownMs, 60 * 86_400_000);
  assertEquals(resolved?.failureThreshold, 10);
});
