// What the multi-process suites (progress and routing, cancellation) share:
// a set of stand-in processes on one engine namespace, and a schema that
// passes numbers through.  Internal to @fedwork/testing.
import type {
  ProgressRoutingBackend,
  ProgressRoutingConformanceOptions,
} from "./progress-routing-suite.ts";
import { createTestNamespace } from "./namespace.ts";

/** How long the suites wait for anything a worker does. */
export const SUITE_TIMEOUT_MS = 30_000;

/** The smallest Standard Schema: it accepts what it is given. */
export interface PassThroughSchema<T> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => { readonly value: T };
    readonly types?: { readonly input: T; readonly output: T };
  };
}

/** A schema for `{ n: number }` payloads that checks nothing. */
export const numberSchema: PassThroughSchema<{ n: number }> = {
  "~standard": { version: 1, vendor: "fedwork-testing", validate: (value) => ({ value }) as never },
};

/**
 * Opens `count` stand-in processes on one fresh namespace, runs `body`
 * with them, then disposes of them and cleans the namespace up, whether
 * `body` passed or threw.
 * @param options The backend's name and how to open it.
 * @param count How many processes.
 * @param body The test.
 */
export async function withBackends(
  options: ProgressRoutingConformanceOptions,
  count: number,
  body: (backends: ProgressRoutingBackend[]) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const backends: ProgressRoutingBackend[] = [];
  try {
    for (let i = 0; i < count; i++) backends.push(await options.open(namespace));
    await body(backends);
  } finally {
    await Promise.all(backends.map((backend) => backend.dispose()));
    await options.cleanup?.(namespace);
  }
}
