import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFederation } from "../../federation/federation.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { type HostPolicyOptions, resolveHostPolicy } from "./options.ts";

test("hostPolicy.concurrency and hostPolicy.rate take a value or a function of the host", () => {
  const fixed = resolveHostPolicy({ concurrency: 4, rate: { limit: 10, period: { seconds: 2 } } });
  assertEquals(fixed?.concurrencyOf?.("a.example"), 4);
  assertEquals(fixed?.rateOf?.("a.example"), { limit: 10, periodMs: 2000 });
  const byHost = resolveHostPolicy({
    concurrency: (host) => host === "small.example" ? 1 : undefined,
    rate: (host) => host === "small.example" ? { limit: 1, period: "PT1S" } : null,
  });
  assertEquals(byHost?.concurrencyOf?.("small.example"), 1);
  assertEquals(byHost?.concurrencyOf?.("big.example"), undefined);
  assertEquals(byHost?.rateOf?.("small.example"), { limit: 1, periodMs: 1000 });
  assertEquals(byHost?.rateOf?.("big.example"), undefined);
  // Off unless set.
  assertEquals(resolveHostPolicy({})?.concurrencyOf, undefined);
  assertEquals(resolveHostPolicy({})?.rateOf, undefined);
});

test("a host limit function's invalid answer fails the delivery's attempt, naming the option", () => {
  const policy = resolveHostPolicy({
    concurrency: () => 0,
    rate: () => ({ limit: 1, period: { seconds: -1 } }),
  });
  const concurrency = assertThrows(
    () => policy?.concurrencyOf?.("a.example"),
    FederationOptionError,
  );
  assertEquals(concurrency.option, 'hostPolicy.concurrency("a.example")');
  assertEquals(/1 to 10000; got 0/.test(concurrency.message), true);
  const rate = assertThrows(() => policy?.rateOf?.("a.example"), FederationOptionError);
  assertEquals(rate.option, 'hostPolicy.rate("a.example").period');
});

test("invalid hostPolicy limits throw when the federation is made, naming the field", () => {
  const make = (hostPolicy: unknown, kv: KvStore = new MemoryKvStore()) => () =>
    createFederation<void>({ kv, hostPolicy: hostPolicy as HostPolicyOptions });
  const cases: [unknown, string, RegExp][] = [
    [{ concurrency: 0 }, "hostPolicy.concurrency", /integer from 1 to 10000; got 0/],
    [{ concurrency: 2.5 }, "hostPolicy.concurrency", /integer/],
    [{ concurrency: "4" }, "hostPolicy.concurrency", /integer/],
    [{ concurrency: 10_001 }, "hostPolicy.concurrency", /10000/],
    [{ rate: 10 }, "hostPolicy.rate", /must be an object/],
    [{ rate: { limit: 10 } }, "hostPolicy.rate", /both limit and period/],
    [{ rate: { limit: 0, period: { seconds: 1 } } }, "hostPolicy.rate.limit", /got 0/],
    [{ rate: { limit: 1, period: { seconds: 0 } } }, "hostPolicy.rate.period", /positive/],
    [{ rate: { limit: 1, period: { days: 2 } } }, "hostPolicy.rate.period", /at most/],
  ];
  for (const [value, option, message] of cases) {
    const error = assertThrows(make(value), FederationOptionError);
    assertEquals(error.option, option);
    if (!message.test(error.message)) throw new Error(`${option}: ${error.message}`);
  }
  assertThrows(
    make({ rate: { limit: 1, perod: { seconds: 1 } } }),
    UnknownOptionError,
    "hostPolicy.rate.period",
  );
  assertThrows(make({ concurency: 1 }), UnknownOptionError, "hostPolicy.concurrency");
});

test("hostPolicy limits need a KvStore with cas(), and say so when the federation is made", () => {
  const memory = new MemoryKvStore();
  const withoutCas: KvStore = {
    get: (key) => memory.get(key),
    set: (key, value, options) => memory.set(key, value, options),
    delete: (key) => memory.delete(key),
    list: (prefix) => memory.list(prefix),
  };
  for (
    const [hostPolicy, option] of [[{ concurrency: 2 }, "hostPolicy.concurrency"], [
      { rate: { limit: 1, period: { seconds: 1 } } },
      "hostPolicy.rate",
    ]] as const
  ) {
    const error = assertThrows(
      () => createFederation<void>({ kv: withoutCas, hostPolicy }),
      FederationOptionError,
    );
    assertEquals(error.option, option);
    assertEquals(error.message.includes("cas()"), true);
  }
  // Blocking and Retry-After need no cas().
  createFederation<void>({ kv: withoutCas, hostPolicy: { block: ["a.example"] } });
});
