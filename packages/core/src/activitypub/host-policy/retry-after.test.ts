import { assertEquals, test } from "@fedify/fixture";
import { retryAfterMilliseconds } from "./retry-after.ts";

const now = Date.parse("2026-12-02T03:00:00Z");

test("Retry-After is read as seconds or as an HTTP date, on 429 and 503 only", () => {
  assertEquals(retryAfterMilliseconds(429, "2", now), 2000);
  assertEquals(retryAfterMilliseconds(503, " 120 ", now), 120_000);
  assertEquals(retryAfterMilliseconds(503, "0", now), 0);
  assertEquals(retryAfterMilliseconds(429, "Wed, 02 Dec 2026 03:00:30 GMT", now), 30_000);
  // A date in the past: no wait.
  assertEquals(retryAfterMilliseconds(429, "Wed, 02 Dec 2026 02:00:00 GMT", now), 0);
  assertEquals(retryAfterMilliseconds(500, "2", now), undefined);
  assertEquals(retryAfterMilliseconds(200, "2", now), undefined);
  assertEquals(retryAfterMilliseconds(429, null, now), undefined);
});

test("a malformed or absurd Retry-After is no wait, or a bounded one", () => {
  assertEquals(retryAfterMilliseconds(429, "-5", now), undefined);
  assertEquals(retryAfterMilliseconds(429, "1.5", now), undefined);
  assertEquals(retryAfterMilliseconds(429, "soon", now), undefined);
  assertEquals(retryAfterMilliseconds(429, "9".repeat(400), now), 365 * 24 * 3600 * 1000);
});
