// Adapters written for Fedify driving Fedwork: each queue of
// testdata/fedify-adapters.ts carries Fedwork's typed tasks, with Fedify's
// MemoryKvStore as the federation's store.  Fedify's queues hand handlers no
// MessageRedelivery, so Fedwork re-enqueues retries into them.
import { assert, assertEquals, assertInstanceOf, deferred, test, within } from "@fedify/fixture";
import { MemoryKvStore } from "@fedify/fedify";
import { Note } from "@fedify/vocab";
import {
  type Context,
  createExponentialBackoffPolicy,
  createFederation,
  type DurationInput,
  type Federation,
  type KvStore,
} from "@fedwork/core";
import { Temporal } from "@js-temporal/polyfill";
import { z } from "zod";
import { FEDIFY_QUEUES, type FedifyQueueFactory } from "./testdata/fedify-adapters.ts";
import { createNamespace } from "./testdata/services.ts";

interface Run {
  readonly federation: Federation<void>;
  readonly ctx: Context<void>;
  /** Starts the workers; call it after defining the tasks. */
  start(): void;
}

/** Runs `body` with a federation on a fresh queue of `factory`, then cleans up. */
async function onQueue(factory: FedifyQueueFactory, body: (run: Run) => Promise<void>) {
  const { queue, dispose } = await factory.create(createNamespace());
  // Fedify's store, typed as Fedwork's KvStore: the assignment is checked.
  const kv: KvStore = new MemoryKvStore();
  const federation = createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    taskRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 50 },
      maxAttempts: 5,
    }),
  });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  const controller = new AbortController();
  let workers: Promise<void> | undefined;
  try {
    await body({
      federation,
      ctx,
      start: () => workers = federation.startQueue(undefined, { signal: controller.signal }),
    });
  } finally {
    controller.abort();
    await within(workers ?? Promise.resolve(), "the workers to stop").catch(() => {});
    await dispose();
  }
}

for (const factory of FEDIFY_QUEUES) {
  test(`${factory.name} carries a task with a vocabulary object and a Date`, async () => {
    await onQueue(factory, async ({ federation, ctx, start }) => {
      const received = deferred<{ note: Note; at: Date }>();
      const carry = federation.defineTask("carry", {
        schema: z.object({ note: z.instanceof(Note), at: z.date() }),
        handler: (_ctx, data) => received.resolve(data),
      });
      start();
      const note = new Note({ id: new URL("https://example.com/notes/1"), content: "Hi" });
      const at = new Date("2026-01-02T03:04:05.678Z");
      await ctx.enqueueTask(carry, { note, at });
      const data = await within(received.promise, "the task to run");
      assertInstanceOf(data.note, Note);
      assertEquals(data.note.id?.href, "https://example.com/notes/1");
      assertEquals(data.note.content, "Hi");
      assertInstanceOf(data.at, Date);
      assertEquals(data.at.toISOString(), at.toISOString());
    });
  });

  test(`${factory.name} runs every task of enqueueTaskMany`, async () => {
    await onQueue(factory, async ({ federation, ctx, start }) => {
      const seen = new Set<number>();
      const all = deferred();
      const count = federation.defineTask("count", {
        schema: z.object({ n: z.number() }),
        handler(_ctx, { n }) {
          seen.add(n);
          if (seen.size === 5) all.resolve();
        },
      });
      start();
      await ctx.enqueueTaskMany(count, [1, 2, 3, 4, 5].map((n) => ({ n })));
      await within(all.promise, "five tasks to run");
      assertEquals([...seen].sort(), [1, 2, 3, 4, 5]);
    });
  });

  test(`${factory.name} gets a failed task's retry, re-enqueued with a Temporal delay`, async () => {
    await onQueue(factory, async ({ federation, ctx, start }) => {
      const attempts: number[] = [];
      const succeeded = deferred();
      const flaky = federation.defineTask("flaky", {
        schema: z.object({}),
        handler(taskCtx) {
          attempts.push(taskCtx.task.attempt);
          if (taskCtx.task.attempt === 0) throw new Error("first attempt fails");
          succeeded.resolve();
        },
      });
      const retrying = deferred<unknown>();
      federation.on("retrying", (event) => retrying.resolve(event.delay));
      start();
      await ctx.enqueueTask(flaky, {});
      await within(succeeded.promise, "the retry to succeed");
      assertEquals(attempts, [0, 1]);
      const delay = await retrying.promise;
      assertEquals(Object.prototype.toString.call(delay), "[object Temporal.Duration]");
    });
  });

  test(`${factory.name} waits for a delay written in every accepted form`, async () => {
    await onQueue(factory, async ({ federation, ctx, start }) => {
      const forms: [string, DurationInput][] = [
        ["duration-like object", { milliseconds: 400 }],
        ["ISO 8601 string", "PT0.4S"],
        ["polyfilled Temporal.Duration", Temporal.Duration.from({ milliseconds: 400 })],
      ];
      const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
      if (native != null) {
        forms.push(["native Temporal.Duration", native.Duration.from({ milliseconds: 400 })]);
      }
      const ran = new Map<string, number>();
      const all = deferred();
      const later = federation.defineTask("later", {
        schema: z.object({ form: z.string(), enqueuedAt: z.number() }),
        handler(_ctx, { form, enqueuedAt }) {
          ran.set(form, Date.now() - enqueuedAt);
          if (ran.size === forms.length) all.resolve();
        },
      });
      start();
      for (const [form, delay] of forms) {
        await ctx.enqueueTask(later, { form, enqueuedAt: Date.now() }, { delay });
      }
      await within(all.promise, "every delayed task to run");
      for (const [form] of forms) {
        // Timers may fire a few milliseconds early against Date.now().
        assert(ran.get(form)! >= 380, `The ${form} delay ran after only ${ran.get(form)} ms.`);
      }
    });
  });

  test(
    factory.ordersByKey
      ? `${factory.name} runs tasks sharing an ordering key one at a time, in order`
      : `${factory.name} runs tasks enqueued with an ordering key`,
    async () => {
      await onQueue(factory, async ({ federation, ctx, start }) => {
        const order: number[] = [];
        let running = 0;
        let overlapped = false;
        const all = deferred();
        const step = federation.defineTask("step", {
          schema: z.object({ n: z.number() }),
          async handler(_ctx, { n }) {
            overlapped ||= running > 0;
            running++;
            await new Promise((resolve) => setTimeout(resolve, 20));
            running--;
            order.push(n);
            if (order.length === 5) all.resolve();
          },
        });
        start();
        for (let n = 0; n < 5; n++) {
          await ctx.enqueueTask(step, { n }, { orderingKey: "actor-1" });
        }
        await within(all.promise, "five keyed tasks to run");
        if (factory.ordersByKey) {
          assertEquals(order, [0, 1, 2, 3, 4]);
          assertEquals(overlapped, false, "Two tasks of one ordering key overlapped.");
        } else {
          assertEquals([...order].sort(), [0, 1, 2, 3, 4]);
        }
      });
    },
  );
}
