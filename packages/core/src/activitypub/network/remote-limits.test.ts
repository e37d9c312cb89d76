import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { resolveRemoteRequestLimits } from "./outgoing-http.ts";

test("resolveRemoteRequestLimits names the option out of range, with the shared wording", () => {
  assertThrows(
    () => resolveRemoteRequestLimits({ timeout: { seconds: 0 } }, {}, "remoteRequests."),
    RangeError,
    "The remoteRequests.timeout option must be a positive duration",
  );
  assertThrows(
    () => resolveRemoteRequestLimits({ timeout: { days: 30 } }),
    RangeError,
    "at most about 24 days",
  );
  assertThrows(
    () => resolveRemoteRequestLimits({ maxBodyBytes: -1 }),
    RangeError,
    "The maxBodyBytes option must be a non-negative integer; got -1.",
  );
  assertThrows(
    () => resolveRemoteRequestLimits({ maxRedirects: 21 }),
    RangeError,
    "The maxRedirects option must be an integer from 0 to 20; got 21.",
  );
  assertEquals(
    resolveRemoteRequestLimits({ timeout: { seconds: 2 } }, { maxRedirects: 3 }),
    {
      timeoutMs: 2_000,
      maxBodyBytes: resolveRemoteRequestLimits({}).maxBodyBytes,
      maxRedirects: 3,
    },
  );
});
