import { assert, test } from "@fedify/fixture";
import { metrics } from "@opentelemetry/api";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { testMeters } from "../processing/testdata/test-meters.ts";
import { createFederation } from "./federation.ts";

test("ctx.meterProvider is the federation's meterProvider option", async () => {
  const meters = testMeters();
  const { meterProvider } = meters;
  const federation = createFederation<void>({ kv: new MemoryKvStore(), meterProvider });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  assert(ctx.meterProvider === meterProvider);
  const request = new Request("https://example.com/users/alice");
  assert(federation.createContext(request, undefined).meterProvider === meterProvider);
  await meters.shutdown();
});

test("ctx.meterProvider is OpenTelemetry's global one without the option", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  assert(ctx.meterProvider === metrics.getMeterProvider());
});
