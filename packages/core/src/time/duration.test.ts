import { assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { Temporal } from "@js-temporal/polyfill";
import { durationToMilliseconds, millisecondsToDuration } from "./duration.ts";

test("durationToMilliseconds accepts duration-like objects", () => {
  assertEquals(durationToMilliseconds({ seconds: 30 }), 30_000);
  assertEquals(durationToMilliseconds({ hours: 1, minutes: 2, milliseconds: 3 }), 3_720_003);
  assertEquals(durationToMilliseconds({ seconds: 0 }), 0);
});

test("durationToMilliseconds accepts Temporal.Duration objects", () => {
  assertEquals(durationToMilliseconds(Temporal.Duration.from({ minutes: 5 })), 300_000);
  assertEquals(durationToMilliseconds(Temporal.Duration.from("PT1.5S")), 1_500);
});

test("durationToMilliseconds counts a day as 24 hours", () => {
  assertEquals(durationToMilliseconds({ days: 2 }), 2 * 24 * 3_600_000);
});

test("durationToMilliseconds rounds sub-millisecond parts up to whole milliseconds", () => {
  assertEquals(durationToMilliseconds({ microseconds: 1_500 }), 2);
  assertEquals(durationToMilliseconds({ nanoseconds: 1 }), 1);
  assertEquals(durationToMilliseconds({ milliseconds: 7, microseconds: 0 }), 7);
});

test("durationToMilliseconds rejects negative durations naming the option", () => {
  assertThrows(() => durationToMilliseconds({ seconds: -1 }, "delay"), RangeError, "delay");
  assertThrows(
    () => durationToMilliseconds(Temporal.Duration.from({ minutes: -3 }), "ttl"),
    RangeError,
    "ttl option must not be negative",
  );
});

test("durationToMilliseconds rejects calendar units", () => {
  for (const duration of [{ years: 1 }, { months: 1 }, { weeks: 1 }]) {
    assertThrows(() => durationToMilliseconds(duration, "maxDelay"), RangeError, "maxDelay");
  }
});

test("durationToMilliseconds rejects values that are not durations with a TypeError", () => {
  for (const value of [null, undefined, 42, {}, { minutes: 1.5 }]) {
    const error = assertThrows(
      () => durationToMilliseconds(value as unknown as Temporal.DurationLike, "delay"),
      TypeError,
      "The delay option must be a Temporal.Duration",
    );
    assertMatch(error.message, /got /);
  }
});

test("durationToMilliseconds names the option 'duration' by default", () => {
  assertThrows(() => durationToMilliseconds({ seconds: -1 }), RangeError, "duration option");
});

test("millisecondsToDuration balances milliseconds up to hours", () => {
  assertEquals(millisecondsToDuration(0).toString(), "PT0S");
  assertEquals(millisecondsToDuration(1_500).toString(), "PT1.5S");
  assertEquals(millisecondsToDuration(90_000).toString(), "PT1M30S");
  assertEquals(millisecondsToDuration(2 * 24 * 3_600_000).toString(), "PT48H");
});

test("millisecondsToDuration rounds to whole milliseconds", () => {
  assertEquals(millisecondsToDuration(1.6).toString(), "PT0.002S");
  assertEquals(millisecondsToDuration(0.4).toString(), "PT0S");
});

test("millisecondsToDuration and durationToMilliseconds round-trip", () => {
  for (const ms of [0, 1, 999, 1_000, 61_001, 12 * 3_600_000, 3 * 24 * 3_600_000 + 7]) {
    assertEquals(durationToMilliseconds(millisecondsToDuration(ms)), ms);
  }
});
