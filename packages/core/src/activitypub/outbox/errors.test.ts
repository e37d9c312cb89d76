import { assertEquals, test } from "@fedify/fixture";
import { DeliveryError, httpStatusOf } from "./errors.ts";

test("httpStatusOf() finds a delivery's status through wrapping errors", () => {
  const delivery = new DeliveryError("https://example.com/inbox", 503, "");
  assertEquals(httpStatusOf(delivery), 503);
  assertEquals(
    httpStatusOf(new Error("retry", { cause: new Error("x", { cause: delivery }) })),
    503,
  );
  assertEquals(httpStatusOf(new DeliveryError("https://example.com/inbox", null, "")), undefined);
  assertEquals(httpStatusOf(undefined), undefined);
  assertEquals(httpStatusOf({ status: "503" }), undefined);
});

test("httpStatusOf() gives up on a cause chain past five links", () => {
  let error: unknown = { status: 500 };
  for (let i = 0; i < 5; i++) error = { cause: error };
  assertEquals(httpStatusOf(error), undefined);
  assertEquals(httpStatusOf((error as { cause: unknown }).cause), 500);
});
