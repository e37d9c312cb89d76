// The app of the durable-steps tests (see durable-steps-suite.ts), shared
// by the test's own federation (which enqueues and sends events) and its
// worker processes (which run the task): one task made of the steps the
// issue's scenario names, run("a"), run("b"), sleep("s"), waitForEvent("e")
// and run("c"), each reporting its side effect.
import {
  createFederationBuilder,
  type Federation,
  type KvStore,
  type MessageQueue,
  type PubSub,
  type TaskDefinition,
} from "@fedwork/core";
import type { PassThroughSchema } from "./backend-set.ts";

/**
 * What a backend module's `open()` returns for one process of the
 * durable-steps tests: its own clients of the engines, sharing their data
 * per namespace.  The queue's lease should be short (a few seconds): a
 * killed worker's message comes back when its lease ends.
 * @since 0.4.0
 */
export interface DurableStepsBackend {
  /** The message queue, for every role. */
  readonly queue: MessageQueue;
  /** The key–value store, where the step records are kept. */
  readonly kv: KvStore;
  /** A pub/sub transport, if the backend has one. */
  readonly pubsub?: PubSub;
}

/** The payload of the app's task. */
export interface FlowPayload {
  /** The event key the task waits on. */
  readonly key: string;
  /** How long it waits, in milliseconds. */
  readonly timeoutMs: number;
  /** How long it sleeps, in milliseconds. */
  readonly sleepMs: number;
}

/** What the app's task reports, in the order its steps run. */
export interface FlowHooks {
  /** A step's function started (it may not finish: the worker may die in it). */
  started(step: string): Promise<void>;
  /** A step did its side effect (its function is about to return). */
  effect(step: string, detail?: string): Promise<void>;
  /** The handler is between two steps: `after` just ended. */
  between(after: string): Promise<void>;
}

/** The app's federation and its task. */
export interface DurableStepsApp {
  readonly federation: Federation<void>;
  readonly flow: TaskDefinition<void, FlowPayload, FlowPayload, { readonly event: string | null }>;
}

const flowSchema: PassThroughSchema<FlowPayload> = {
  "~standard": {
    version: 1,
    vendor: "fedwork-testing",
    validate: (value) => ({ value }) as never,
  },
};

/**
 * Builds the app on a backend.
 * @param backend The engines.
 * @param hooks What the task reports.
 * @returns The federation and the task.
 */
export async function buildDurableStepsApp(
  backend: DurableStepsBackend,
  hooks: FlowHooks,
): Promise<DurableStepsApp> {
  const builder = createFederationBuilder<void>();
  const step = async <T>(id: string, value: T): Promise<T> => {
    await hooks.started(id);
    await hooks.effect(id);
    return value;
  };
  const flow = builder.defineTask("durable-flow", {
    schema: flowSchema,
    handler: async (ctx, data) => {
      const a = await ctx.step.run("a", () => step("a", new Date(1000)));
      await hooks.between("a");
      const b = await ctx.step.run("b", () => step("b", new Map([["b", 2]])));
      await hooks.between("b");
      await ctx.step.sleep("s", { milliseconds: data.sleepMs });
      await hooks.between("s");
      const event = await ctx.step.waitForEvent<{ readonly word: string }>("e", {
        event: "durable-go",
        key: data.key,
        timeout: { milliseconds: data.timeoutMs },
      });
      await hooks.between("e");
      // The recorded values come back as they were (a Date, a Map).
      const checked = a instanceof Date && a.getTime() === 1000 && b.get("b") === 2;
      await ctx.step.run("c", async () => {
        await hooks.started("c");
        await hooks.effect("c", `${event?.word ?? "null"} ${checked}`);
      });
      return { event: event?.word ?? null };
    },
  });
  const federation = await builder.build({
    kv: backend.kv,
    queue: backend.queue,
    ...(backend.pubsub == null ? {} : { pubsub: backend.pubsub }),
    manuallyStartQueue: true,
  });
  return {
    federation,
    flow: flow as DurableStepsApp["flow"],
  };
}
