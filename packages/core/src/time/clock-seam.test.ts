import { assertEquals, assertStrictEquals, test } from "@fedify/fixture";
import { CLOCK_SEAM, clockOf } from "./clock-seam.ts";

test("clockOf is Date.now itself unless the options carry a clock under the seam", () => {
  assertStrictEquals(clockOf({}), Date.now);
  assertStrictEquals(clockOf({ [CLOCK_SEAM]: "not a clock" }), Date.now);
  const clock = () => 42;
  assertStrictEquals(clockOf({ [CLOCK_SEAM]: clock }), clock);
  // The key is registered, so the kit needs no import to reach it.
  assertEquals(clockOf({ [Symbol.for("fedwork.testing.clock")]: clock })(), 42);
});
