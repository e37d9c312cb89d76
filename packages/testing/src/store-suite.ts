// What the key–value store suites (webhooks, worker presence, task
// retention) share: the options every store gives, a test that opens the
// store as often as it likes on one namespace and always cleans up, and a
// schema that passes payloads through.  Internal to @fedwork/testing.
import type { KvStore } from "@fedwork/core";
import type { FailedDeliveryConformanceOptions } from "./failed-delivery-suite.ts";
import { createTestNamespace } from "./namespace.ts";

/**
 * How a suite opens a key–value store: the options of
 * `testFailedDeliveries()`, which `testWebhooks()`, `testWorkerPresence()`
 * and `testTaskRetention()` share.  These suites call `open()` more than
 * once with the same namespace (another process, or the same one after a
 * restart): each call must reach the same data.
 */
export type StoreSuiteOptions = FailedDeliveryConformanceOptions;

/** Opens a store on the test's namespace; each call is another connection. */
export type OpenStore = () => Promise<KvStore>;

/**
 * Runs `body` with a fresh namespace, then closes every store it opened
 * (in the reverse order) and cleans the namespace up, whether it passed or
 * threw.
 * @param options How to open the store.
 * @param body The test.
 */
export async function withStore(
  options: StoreSuiteOptions,
  body: (open: OpenStore, namespace: string) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const opened: KvStore[] = [];
  try {
    await body(async () => {
      const kv = await options.open(namespace);
      opened.push(kv);
      return kv;
    }, namespace);
  } finally {
    for (const kv of opened.reverse()) await options.close?.(kv);
    await options.cleanup?.(namespace);
  }
}

/** The smallest Standard Schema: it accepts what it is given. */
export interface PassThroughSchema<T> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => { readonly value: T };
    readonly types?: { readonly input: T; readonly output: T };
  };
}

/**
 * A schema that passes payloads of type `T` through unchecked; it keeps the
 * public suites free of a schema library.
 * @returns The schema.
 */
export function passThrough<T>(): PassThroughSchema<T> {
  return {
    "~standard": {
      version: 1,
      vendor: "fedwork-testing",
      validate: (value) => ({ value }) as never,
    },
  };
}
