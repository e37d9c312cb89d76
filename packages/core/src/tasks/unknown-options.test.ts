// Options the task and worker API does not know are refused, not silently
// ignored: a setting ported from BullMQ or Fedify must not go without effect.
import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../federation/federation.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { TaskDefinitionError } from "./errors.ts";
import type { TaskEnqueueOptions } from "./definition.ts";

const base = new URL("https://web.example/");

function setUp() {
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("note", {
    schema: z.object({ n: z.number() }),
    handler: () => {},
  });
  const ctx = federation.createContext(base, undefined);
  return { queue, federation, task, ctx };
}

test("enqueueTask refuses an unknown option, suggesting the nearest name", async () => {
  const { queue, ctx, task } = setUp();
  const error = await assertRejects(
    () => ctx.enqueueTask(task, { n: 1 }, { dealy: { seconds: 1 } } as TaskEnqueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "dealy");
  assertEquals(
    error.message,
    "Unknown option dealy of enqueueTask(); did you mean delay? " +
      "The options are capabilities, debounce, deduplicationKey, delay, orderingKey, priority, " +
      "throttle.",
  );
  assertEquals((await queue.getDepth()).queued, 0);
});

test("enqueueTask refuses BullMQ's attempts, which Fedwork does not have", async () => {
  const { ctx, task } = setUp();
  const error = await assertRejects(
    () => ctx.enqueueTask(task, { n: 1 }, { attempts: 3 } as TaskEnqueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "attempts");
});

test("enqueueTaskMany refuses an unknown option before enqueueing any payload", async () => {
  const { queue, ctx, task } = setUp();
  const error = await assertRejects(
    () =>
      ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }], {
        orderingkey: "a",
      } as TaskEnqueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "orderingkey");
  assertEquals(error.message.includes("did you mean orderingKey?"), true);
  assertEquals((await queue.getDepth()).queued, 0);
});

test("enqueueTask accepts its known options, an undefined one included", async () => {
  const { ctx, task } = setUp();
  const result = await ctx.enqueueTask(task, { n: 1 }, {
    delay: { seconds: 1 },
    orderingKey: undefined,
  });
  assertEquals(result.status, "enqueued");
});

test("defineTask refuses an unknown option, suggesting the nearest name", () => {
  const { federation } = setUp();
  const error = assertThrows(
    () =>
      federation.defineTask(
        "other",
        {
          schema: z.object({}),
          handler: () => {},
          retrypolicy: undefined,
          serialize: JSON.stringify,
        } as never,
      ),
    TaskDefinitionError,
  );
  assertEquals(error.option, "serialize");
  assertEquals(error.message.startsWith('Unknown option serialize of the task "other". '), true);
  const typo = assertThrows(
    () =>
      federation.defineTask(
        "third",
        {
          schema: z.object({}),
          handler: () => {},
          retrypolicy: () => null,
        } as never,
      ),
    TaskDefinitionError,
  );
  assertEquals(typo.message.includes("did you mean retryPolicy?"), true);
});

test("startQueue refuses an unknown option, suggesting the nearest name", async () => {
  const { federation } = setUp();
  const error = await assertRejects(
    () =>
      federation.startQueue(
        undefined,
        {
          shutdownTimout: { seconds: 1 },
        } as Parameters<typeof federation.startQueue>[1],
      ),
    UnknownOptionError,
  );
  assertEquals(error.option, "shutdownTimout");
  assertEquals(
    error.message,
    "Unknown option shutdownTimout of startQueue(); did you mean shutdownTimeout? " +
      "The options are capabilities, machineId, onWorkerEvent, presence, queue, shutdownTimeout, signal.",
  );
});
