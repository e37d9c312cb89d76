import { assertEquals, assertInstanceOf, assertThrows, test } from "@fedify/fixture";
import { assertKnownOptions, closestName, UnknownOptionError } from "./known-options.ts";

test("assertKnownOptions refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () =>
      assertKnownOptions({ pollIntervall: 5 }, ["pollInterval", "leaseTime"], {
        where: "new ExampleQueue()",
      }),
    UnknownOptionError,
  );
  assertInstanceOf(error, TypeError);
  assertEquals(error.option, "pollIntervall");
  assertEquals(
    error.message,
    "Unknown option pollIntervall of new ExampleQueue(); did you mean pollInterval? " +
      "The options are leaseTime, pollInterval.",
  );
});

test("assertKnownOptions names a nested option with its path and lists the known ones", () => {
  const error = assertThrows(
    () => assertKnownOptions({ color: "red" }, ["timeout", "maxBodySize"], { prefix: "http." }),
    UnknownOptionError,
  );
  assertEquals(error.option, "http.color");
  assertEquals(
    error.message,
    "Unknown option http.color. The options are http.maxBodySize, http.timeout.",
  );
});

test("assertKnownOptions lets known names, undefined values and non-objects through", () => {
  assertKnownOptions({ leaseTime: 1, other: undefined }, ["leaseTime"]);
  assertKnownOptions(undefined, ["leaseTime"]);
  assertKnownOptions(null, ["leaseTime"]);
});

test("closestName suggests only names near enough to be a typo", () => {
  assertEquals(closestName("dealy", ["delay", "orderingKey"]), "delay");
  assertEquals(closestName("ORDERINGKEY", ["delay", "orderingKey"]), "orderingKey");
  assertEquals(closestName("priority", ["delay", "orderingKey"]), undefined);
});
