// How the suites register their tests and assert, without depending on a
// test library: one small register function per runtime's own runner, and
// node:assert/strict, which Deno, Node.js and Bun all provide.  The suites
// run in the user's project, so @fedwork/testing cannot use the workspace's
// private @fedify/fixture harness.
import assertModule from "node:assert/strict";
import process from "node:process";

interface DenoTestRegistrar {
  test(options: {
    name: string;
    fn: () => unknown;
    sanitizeOps: boolean;
    sanitizeResources: boolean;
  }): void;
}
type Register = (name: string, fn: () => unknown) => void;

// Bun's default per-test timeout (5 s) is too short for tests that talk to
// real engines; the tests race their own, more specific timeouts instead.
const BUN_TIMEOUT_MS = 600_000;

// The specifiers are variables so that type checkers and bundlers leave the
// other runtimes' test modules alone.
const bunTestModule = "bun:test";
const nodeTestModule = "node:test";

// Inside Cloudflare's workerd there is no test runner; the tests go into
// the list a harness runs (the one @fedify/fixture's testDefinitions shares
// under this registered symbol).  workerd's nodejs_compat defines
// process.versions.node, so it is told apart by its user agent first.
const HARNESS_DEFINITIONS = Symbol.for("fedwork.harness.testDefinitions");

async function runtimeRegister(): Promise<Register> {
  const navigator = (globalThis as { navigator?: { userAgent?: unknown } }).navigator;
  if (navigator?.userAgent === "Cloudflare-Workers") {
    const registry = globalThis as unknown as Record<
      symbol,
      { name: string; fn: () => unknown }[] | undefined
    >;
    const definitions = registry[HARNESS_DEFINITIONS] ??= [];
    return (name, fn) => void definitions.push({ name, fn });
  }
  const deno = (globalThis as unknown as { Deno?: DenoTestRegistrar }).Deno;
  if (deno != null) {
    // The engines' drivers keep sockets and timers beyond one test by design.
    return (name, fn) => deno.test({ name, fn, sanitizeOps: false, sanitizeResources: false });
  }
  if ("Bun" in globalThis) {
    const bun = await import(bunTestModule) as {
      test(name: string, fn: () => unknown, timeout: number): void;
    };
    return (name, fn) => bun.test(name, fn, BUN_TIMEOUT_MS);
  }
  if (process.versions?.node == null) {
    throw new Error("@fedwork/testing runs its suites on Deno, Node.js or Bun.");
  }
  const node = await import(nodeTestModule) as { test(name: string, fn: () => unknown): unknown };
  return (name, fn) => void node.test(name, fn);
}

const register = await runtimeRegister();

/**
 * Registers a test with the runtime's own runner (`Deno.test`, `node:test`
 * or `bun:test`).
 * @param name The test's name.
 * @param fn The test's body.
 */
export function test(name: string, fn: () => unknown): void {
  register(name, fn);
}

/** Asserts that a value is truthy. */
export function assert(value: unknown, message?: string): asserts value {
  assertModule.ok(value, message);
}

/** Asserts that two values are deeply and strictly equal. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  assertModule.deepStrictEqual(actual, expected, message);
}

/** Asserts that a value is an instance of a class. */
export function assertInstanceOf<T>(
  value: unknown,
  // deno-lint-ignore no-explicit-any
  type: new (...args: any[]) => T,
): asserts value is T {
  assertModule.ok(
    value instanceof type,
    `Expected an instance of ${type.name}, got ${Object.prototype.toString.call(value)}.`,
  );
}

/** Fails the test. */
export function fail(message: string): never {
  assertModule.fail(message);
}
