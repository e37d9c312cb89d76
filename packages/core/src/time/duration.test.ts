import { assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { Temporal } from "@js-temporal/polyfill";
import {
  type DurationInput,
  durationToMilliseconds,
  millisecondsToDuration,
  toTemporalDuration,
} from "./duration.ts";

test("durationToMilliseconds accepts duration-like objects", () => {
  assertEquals(durationToMilliseconds({ seconds: 30 }), 30_000);
  assertEquals(durationToMilliseconds({ hours: 1, minutes: 2, milliseconds: 3 }), 3_720_003);
  assertEquals(durationToMilliseconds({ seconds: 0 }), 0);
});

test("durationToMilliseconds accepts Temporal.Duration objects", () => {
  assertEquals(durationToMilliseconds(Temporal.Duration.from({ minutes: 5 })), 300_000);
  assertEquals(durationToMilliseconds(Temporal.Duration.from("PT1.5S")), 1_500);
});

test("durationToMilliseconds accepts ISO 8601 duration strings", () => {
  assertEquals(durationToMilliseconds("PT5M"), 300_000);
  assertEquals(durationToMilliseconds("P1DT0.5S"), 86_400_500);
  assertThrows(() => durationToMilliseconds("five minutes", "delay"), TypeError, "ISO 8601");
  assertThrows(() => durationToMilliseconds("P1M", "delay"), RangeError, "months");
});

test("durationToMilliseconds counts a day as 24 hours", () => {
  assertEquals(durationToMilliseconds({ days: 2 }), 2 * 24 * 3_600_000);
});

test("durationToMilliseconds rounds sub-millisecond parts up to whole milliseconds", () => {
  assertEquals(durationToMilliseconds({ microseconds: 1_500 }), 2);
  assertEquals(durationToMilliseconds({ nanoseconds: 1 }), 1);
  assertEquals(durationToMilliseconds({ milliseconds: 7, microseconds: 0 }), 7);
});

test("durationToMilliseconds accepts fractional units, in exact decimal arithmetic", () => {
  assertEquals(durationToMilliseconds({ seconds: 1.5 }, "delay"), 1_500);
  assertEquals(durationToMilliseconds({ seconds: 1.1 }), 1_100);
  assertEquals(durationToMilliseconds({ minutes: 0.1 }), 6_000);
  assertEquals(durationToMilliseconds({ hours: 1.5, seconds: 0.25 }), 5_400_250);
  assertEquals(durationToMilliseconds({ days: 0.5 }), 43_200_000);
  assertEquals(durationToMilliseconds({ days: 200.1 }), 17_288_640_000);
  // Sub-millisecond parts round up, as for whole microseconds.
  assertEquals(durationToMilliseconds({ milliseconds: 0.2 }), 1);
  assertEquals(durationToMilliseconds({ seconds: 1e-7 }), 1);
  assertEquals(durationToMilliseconds({ microseconds: 1_000.5 }), 2);
  assertEquals(durationToMilliseconds({ seconds: 2, milliseconds: 0.5 }), 2_001);
});

test("durationToMilliseconds rejects fractional units that are negative or calendar units", () => {
  assertThrows(() => durationToMilliseconds({ seconds: -1.5 }, "delay"), RangeError, "negative");
  assertThrows(
    () => durationToMilliseconds({ seconds: 1.5, milliseconds: -1 }, "delay"),
    RangeError,
    "delay option must not be negative",
  );
  assertThrows(() => durationToMilliseconds({ weeks: 1.5 }, "ttl"), RangeError, "weeks");
  assertThrows(() => durationToMilliseconds({ seconds: 1.5, weeks: 1 }), RangeError, "weeks");
  assertThrows(() => durationToMilliseconds({ seconds: Number.NaN }), TypeError, "duration");
  assertThrows(
    () => durationToMilliseconds({ seconds: 0.5, lightyears: 1 } as DurationInput),
    TypeError,
  );
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
  for (const value of [null, undefined, 42, {}, { minutes: "five" }]) {
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

test("toTemporalDuration turns every accepted form into a Temporal.Duration", () => {
  const forms: DurationInput[] = [
    { minutes: 5 },
    "PT5M",
    Temporal.Duration.from({ minutes: 5 }),
  ];
  const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
  if (native != null) forms.push(native.Duration.from({ minutes: 5 }));
  for (const form of forms) {
    const duration = toTemporalDuration(form, "delay");
    // What adapters written for Fedify call on a delay or a TTL:
    assertEquals(duration.total("millisecond"), 300_000);
    assertEquals(duration.round({ largestUnit: "hour" }).total({ unit: "second" }), 300);
    assertEquals(Object.prototype.toString.call(duration), "[object Temporal.Duration]");
  }
});

test("toTemporalDuration turns fractional units into whole milliseconds", () => {
  const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
  const duration = toTemporalDuration({ seconds: 1.5 }, "delay");
  assertEquals(duration.total("millisecond"), 1_500);
  assertEquals(duration instanceof (native ?? Temporal).Duration, true);
  assertEquals(toTemporalDuration({ milliseconds: 0.5 }).total("millisecond"), 1);
  assertThrows(() => toTemporalDuration({ minutes: -0.5 }, "ttl"), RangeError, "ttl");
});

test("toTemporalDuration uses the runtime's own Temporal where it has one", () => {
  const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
  const duration = toTemporalDuration({ seconds: 1 });
  assertEquals(duration instanceof (native ?? Temporal).Duration, true);
});

test("toTemporalDuration returns a Temporal.Duration unchanged", () => {
  const duration = Temporal.Duration.from({ hours: 2 });
  assertEquals(toTemporalDuration(duration) === duration, true);
});

test("toTemporalDuration rejects what durationToMilliseconds rejects, naming the option", () => {
  assertThrows(() => toTemporalDuration({ seconds: -1 }, "ttl"), RangeError, "ttl");
  assertThrows(() => toTemporalDuration({ weeks: 1 }, "delay"), RangeError, "delay");
  assertThrows(
    () => toTemporalDuration(42 as unknown as DurationInput, "delay"),
    TypeError,
    "delay",
  );
});

test("simple durations convert without Temporal arithmetic, with the same results", () => {
  const cases: [DurationInput, number][] = [
    [{ days: 1, hours: 2, minutes: 3, seconds: 4, milliseconds: 5 }, 93_784_005],
    [{ milliseconds: 0 }, 0],
    [Temporal.Duration.from({ hours: 1, milliseconds: 250 }), 3_600_250],
    [Temporal.Duration.from({ seconds: 1, microseconds: 1 }), 1_001],
  ];
  for (const [duration, expected] of cases) {
    assertEquals(durationToMilliseconds(duration), expected);
  }
  assertThrows(() => durationToMilliseconds({ hours: -1 }), RangeError);
  assertThrows(() => durationToMilliseconds({ weeks: 1 }), RangeError);
  assertThrows(() => durationToMilliseconds({}), TypeError);
});
