// The tasks of testTaskLimits() (see limits-suite.ts), defined the same way
// by the suite (which enqueues them) and by its worker processes (which run
// them): each run reports to the suite's loopback HTTP counter.
import type { Federation, TaskDefinition } from "@fedwork/core";
import { passThrough } from "./store-suite.ts";

/** A payload of the limited task: its concurrency key and its number. */
export interface LimitedPayload {
  readonly key: string;
  readonly i: number;
}

/** The concurrency limit of the key-limited task. */
export const KEY_LIMIT = 2;
/** The rate of the paced task: starts per second. */
export const RATE_PER_SECOND = 20;
/** How long a run of the key-limited task lasts between its reports. */
const RUN_MS = 15;

/** The two tasks of the suite. */
export interface LimitTasks {
  readonly limited: TaskDefinition<void, LimitedPayload>;
  readonly paced: TaskDefinition<void, { readonly i: number }>;
  /** Without limits: warms the workers up before a timed test. */
  readonly warm: TaskDefinition<void, { readonly i: number }>;
}

async function report(counter: string, path: string): Promise<void> {
  const response = await fetch(new URL(path, counter), { method: "POST" });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`The counter answered ${response.status} to ${path}.`);
}

/**
 * Defines the suite's tasks: `limited`, at most {@link KEY_LIMIT} runs per
 * key at once, which reports `/enter` and `/leave`; `paced`, at most
 * {@link RATE_PER_SECOND} starts a second, which reports `/start`.
 * @param federation The federation.
 * @param counter The counter's base URL (the suite's loopback server).
 * @returns The tasks.
 */
export function defineLimitTasks(
  federation: Federation<void>,
  counter: string,
  holders: (key: string) => Promise<number> = () => Promise.resolve(0),
): LimitTasks {
  const limited = federation.defineTask("limited", {
    schema: passThrough<LimitedPayload>(),
    concurrency: { key: ({ key }) => key, limit: KEY_LIMIT },
    async handler(_ctx, { key, i }) {
      const held = await holders(key);
      await report(counter, `enter?key=${encodeURIComponent(key)}&i=${i}&holders=${held}`);
      await new Promise((resolve) => setTimeout(resolve, RUN_MS));
      await report(counter, `leave?key=${encodeURIComponent(key)}&i=${i}`);
    },
  });
  const paced = federation.defineTask("paced", {
    schema: passThrough<{ readonly i: number }>(),
    rateLimit: { limit: RATE_PER_SECOND, period: { seconds: 1 } },
    async handler(_ctx, { i }) {
      // The start as the run saw it: the report's own latency is not the
      // rate's doing.
      await report(counter, `start?i=${i}&at=${Date.now()}`);
    },
  });
  const warm = federation.defineTask("warm", {
    schema: passThrough<{ readonly i: number }>(),
    async handler(_ctx, { i }) {
      await report(counter, `warm?i=${i}`);
    },
  });
  return { limited, paced, warm };
}
