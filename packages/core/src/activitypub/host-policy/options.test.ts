import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFederation } from "../../federation/federation.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { type HostPolicyOptions, resolveHostPolicy } from "./options.ts";
import { normalizeHostName } from "./host-name.ts";

function blocks(block: readonly string[], host: string): boolean | Promise<boolean> {
  const isBlocked = resolveHostPolicy({ block })?.isBlocked;
  return isBlocked == null ? false : isBlocked(normalizeHostName(host)!);
}

test("normalizeHostName() folds case, Unicode, trailing dots and ports into one spelling", () => {
  assertEquals(normalizeHostName("Example.COM"), "example.com");
  assertEquals(normalizeHostName("example.com."), "example.com");
  assertEquals(normalizeHostName("example.com:8443"), "example.com");
  assertEquals(normalizeHostName("Bücher.example"), "xn--bcher-kva.example");
  assertEquals(normalizeHostName("xn--bcher-kva.example"), "xn--bcher-kva.example");
  assertEquals(normalizeHostName("[::1]:80"), "[::1]");
  assertEquals(normalizeHostName("https://example.com"), undefined);
  assertEquals(normalizeHostName("example.com/path"), undefined);
  assertEquals(normalizeHostName("user@example.com"), undefined);
  assertEquals(normalizeHostName(""), undefined);
});

test("hostPolicy.block blocks a domain and its subdomains, whatever their spelling", () => {
  const list = ["Spam.Example.", "bücher.example", "192.0.2.1", "ports.example:8443"];
  assertEquals(blocks(list, "spam.example"), true);
  assertEquals(blocks(list, "a.b.SPAM.example:443"), true);
  assertEquals(blocks(list, "xn--bcher-kva.example"), true);
  assertEquals(blocks(list, "shop.bücher.example"), true);
  assertEquals(blocks(list, "192.0.2.1"), true);
  assertEquals(blocks(list, "ports.example"), true);
  assertEquals(blocks(list, "notspam.example"), false);
  assertEquals(blocks(list, "example"), false);
});

test("hostPolicy.block takes a function, called with the normalised host", async () => {
  const seen: string[] = [];
  const isBlocked = resolveHostPolicy({
    block: (host) => {
      seen.push(host);
      return Promise.resolve(host.endsWith(".bad"));
    },
  })?.isBlocked;
  assertEquals(await isBlocked?.("x.bad"), true);
  assertEquals(await isBlocked?.("x.good"), false);
  assertEquals(seen, ["x.bad", "x.good"]);
});

test("hostPolicy honours Retry-After up to an hour by default, and not at all with false", () => {
  assertEquals(resolveHostPolicy({})?.maxRetryAfterMs, 3_600_000);
  assertEquals(resolveHostPolicy({ retryAfter: { max: { seconds: 5 } } })?.maxRetryAfterMs, 5000);
  assertEquals(resolveHostPolicy({ retryAfter: false })?.maxRetryAfterMs, undefined);
  assertEquals(resolveHostPolicy({ block: [] })?.isBlocked, undefined);
  assertEquals(resolveHostPolicy(undefined), undefined);
  assertEquals(resolveHostPolicy(false), undefined);
});

test("invalid hostPolicy options throw when the federation is made, naming the option", () => {
  const make = (hostPolicy: unknown) => () =>
    createFederation<void>({
      kv: new MemoryKvStore(),
      hostPolicy: hostPolicy as HostPolicyOptions,
    });
  const cases: [unknown, string, RegExp][] = [
    [["a.example"], "hostPolicy", /must be an object/],
    [{ block: "a.example" }, "hostPolicy.block", /list of host names or a function/],
    [{ block: ["a.example", "https://b.example/"] }, "hostPolicy.block[1]", /no scheme/],
    [{ block: ["a.example", 42] }, "hostPolicy.block[1]", /must be a host name; got number/],
    [{ block: ["*.c.example"] }, "hostPolicy.block[0]", /"c.example"/],
    [{ block: [""] }, "hostPolicy.block[0]", /host name/],
    [{ retryAfter: { max: { seconds: 0 } } }, "hostPolicy.retryAfter.max", /positive duration/],
    [{ retryAfter: { max: { days: 8 } } }, "hostPolicy.retryAfter.max", /at most/],
    [{ retryAfter: true }, "hostPolicy.retryAfter", /must be an object/],
  ];
  for (const [value, option, message] of cases) {
    const error = assertThrows(make(value), FederationOptionError);
    assertEquals(error.option, option);
    if (!message.test(error.message)) throw new Error(`${option}: ${error.message}`);
  }
  assertThrows(make({ blocks: [] }), UnknownOptionError, "hostPolicy.block");
  assertThrows(
    make({ retryAfter: { maximum: 1 } }),
    UnknownOptionError,
    "hostPolicy.retryAfter.max",
  );
});
