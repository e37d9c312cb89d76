import { assertEquals, assertInstanceOf, assertThrows, test } from "@fedify/fixture";
import { checkFederationOption, FederationOptionError } from "./federation-option-error.ts";
import { positiveDurationOption, positiveIntegerOption } from "./value-options.ts";

test("positiveIntegerOption() words a bounded count as a range, and the unbounded one as positive", () => {
  assertEquals(positiveIntegerOption(undefined, "prefetch", 16, 65535), 16);
  assertEquals(positiveIntegerOption(65535, "prefetch", 16, 65535), 65535);
  assertThrows(
    () => positiveIntegerOption(65536, "prefetch", 16, 65535),
    RangeError,
    "The prefetch option must be an integer from 1 to 65535; got 65536.",
  );
  assertThrows(
    () => positiveIntegerOption(0, "concurrency", 1),
    RangeError,
    "The concurrency option must be a positive integer; got 0.",
  );
  assertThrows(
    () => positiveIntegerOption("4", "concurrency", 1),
    RangeError,
    'The concurrency option must be a positive integer; got "4".',
  );
});

test("checkFederationOption() turns a value check's error into a FederationOptionError naming the option", () => {
  const error = assertThrows(
    () =>
      checkFederationOption(
        "webhooks.timeout",
        () => positiveDurationOption({ seconds: 0 }, "webhooks.timeout", 10_000),
      ),
    FederationOptionError,
  );
  assertEquals(error.option, "webhooks.timeout");
  assertEquals(
    error.message,
    "The webhooks.timeout option must be a positive duration of at most about 24 days; got 0 ms.",
  );
  assertInstanceOf(error, TypeError);
  assertEquals(checkFederationOption("x", () => 42), 42);
});
