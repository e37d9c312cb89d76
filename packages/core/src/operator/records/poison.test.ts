// Poison-message quarantine through the federation: a message the queue
// has handed out more than maxDeliveries times is kept in the failed-task
// store without running, and retryFailedTask() replays it.
import { assert, assertEquals, assertThrows, deferred, test, within } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { z } from "zod";
import type { InboxMessage } from "../../activitypub/inbox/message.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import { FederationOptionError } from "../../federation/errors.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import type {
  MessageQueue,
  MessageQueueHandler,
  MessageQueueListenOptions,
} from "../../queue/message-queue.ts";
import { PoisonMessageError } from "../../processing/errors.ts";
import type { MessageFailedEvent } from "../../processing/events.ts";
import { MESSAGE_METRICS } from "../../processing/metrics.ts";
import { count, testMeters } from "../../processing/testdata/test-meters.ts";
import { TaskDefinitionError } from "../../tasks/errors.ts";

/**
 * A queue whose hand-outs the test makes one at a time, with the delivery
 * count a durable queue would have counted (as if the workers that took
 * the message before had died).
 */
class HandOutQueue implements MessageQueue {
  readonly messages: unknown[] = [];
  #handler: MessageQueueHandler | undefined;
  readonly #listening = deferred();

  enqueue(message: unknown): Promise<void> {
    this.messages.push(structuredClone(message));
    return Promise.resolve();
  }

  listen(handler: MessageQueueHandler, options: MessageQueueListenOptions = {}): Promise<void> {
    this.#handler = handler;
    this.#listening.resolve();
    return new Promise((resolve) => {
      if (options.signal?.aborted) return resolve();
      options.signal?.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  /** Hands the oldest message out; acknowledges it when the handler returns. */
  async handOut(deliveryCount: number): Promise<void> {
    await within(this.#listening.promise, "the worker to listen");
    const message = this.messages[0];
    await this.#handler!(message, { deliveryCount, redeliver: () => Promise.resolve() });
    this.messages.shift();
  }
}

async function followMessage(): Promise<InboxMessage> {
  const follow = new Follow({
    id: new URL("https://remote.example/follows/1"),
    actor: new URL("https://remote.example/users/bob"),
    object: new URL("https://web.example/users/alice"),
  });
  return {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: "https://web.example",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity: await follow.toJsonLd(),
    identifier: "alice",
    orderingKey: "bob",
  };
}

function startWorker(federation: Federation<void>) {
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  return async () => {
    controller.abort();
    await worker;
  };
}

test("a task handed out more than its maxDeliveries is quarantined unrun, and retryFailedTask() replays it", async () => {
  const queue = new HandOutQueue();
  const meters = testMeters();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    meterProvider: meters.meterProvider,
  });
  const runs: string[] = [];
  const failed: MessageFailedEvent[] = [];
  federation.on("failed", (event) => void failed.push(event));
  const crash = federation.defineTask("crash", {
    schema: z.object({ n: z.number() }),
    handler: (_ctx, { n }) => void runs.push(`run ${n}`),
    maxDeliveries: 2,
  });
  const stop = startWorker(federation);
  try {
    const ctx = federation.createContext(new URL("https://web.example/"), undefined);
    const { messageId } = await ctx.enqueueTask(crash, { n: 1 }) as { messageId: string };
    // Hand-outs 1 and 2 are within the limit; the third is not.
    await queue.handOut(3);
    assertEquals(runs, []);
    assertEquals(queue.messages.length, 0, "the quarantined message was not acknowledged");
    assertEquals(failed.map((event) => event.reason), ["poison"]);
    assert(failed[0].error instanceof PoisonMessageError);
    const [record] = (await federation.listFailedTasks()).records;
    assertEquals(record.id, messageId);
    assertEquals(record.kind, "task");
    assertEquals(record.taskName, "crash");
    assertEquals(record.reason, "poison");
    assertEquals(record.error?.name, "PoisonMessageError");
    const metrics = await meters.collect();
    const task = { "fedwork.message.type": "task", "fedwork.task.name": "crash" };
    assertEquals(count(metrics, MESSAGE_METRICS.quarantined, task), 1);
    assertEquals(
      count(metrics, MESSAGE_METRICS.failed, { ...task, "fedwork.failure.reason": "poison" }),
      1,
    );
    assertEquals(await federation.retryFailedTask(messageId), { status: "enqueued", messageId });
    await queue.handOut(1);
    assertEquals(runs, ["run 1"]);
    assertEquals((await federation.listFailedTasks()).records, []);
  } finally {
    await stop();
  }
});

test("an inbox message handed out more than maxDeliveries is kept whole and replayed into the inbox queue", async () => {
  const queue = new HandOutQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox: queue },
    manuallyStartQueue: true,
    maxDeliveries: 3,
  });
  const follows: string[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox").on(Follow, (_ctx, follow) => {
    follows.push(follow.id!.href);
  });
  const stop = startWorker(federation);
  try {
    const message = await followMessage();
    await queue.enqueue(message);
    await queue.handOut(4);
    assertEquals(follows, []);
    const page = await federation.listFailedTasks({ kind: "inbox" });
    assertEquals(page.records.length, 1);
    const record = page.records[0];
    assertEquals(record.kind, "inbox");
    assertEquals(record.taskName, "fedwork:inbox");
    assertEquals(record.reason, "poison");
    assertEquals(record.orderingKey, "bob");
    assertEquals(record.message, {
      activityType: "Follow",
      activityId: "https://remote.example/follows/1",
      deliveries: 4,
    });
    assertEquals(
      await federation.countFailedTasks({ kind: "inbox" }),
      new Map([["fedwork:inbox", 1]]),
    );
    await federation.retryFailedTask(message.id);
    const replayed = queue.messages[0] as InboxMessage;
    assertEquals(replayed.id, message.id);
    assertEquals(replayed.attempt, 0);
    assertEquals(replayed.identifier, "alice");
    assertEquals(replayed.orderingKey, "bob");
    await queue.handOut(1);
    assertEquals(follows, ["https://remote.example/follows/1"]);
    assertEquals((await federation.listFailedTasks()).records, []);
  } finally {
    await stop();
  }
});

test("maxDeliveries is checked when the federation and the task are defined", () => {
  for (const maxDeliveries of [0, -1, 1.5, "5" as unknown as number]) {
    assertThrows(
      () => createFederation<void>({ kv: new MemoryKvStore(), maxDeliveries }),
      FederationOptionError,
      "maxDeliveries",
    );
  }
  assertThrows(
    // @ts-expect-error: a misspelt option.
    () => createFederation<void>({ kv: new MemoryKvStore(), maxDelivery: 3 }),
    UnknownOptionError,
    "did you mean maxDeliveries?",
  );
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  assertThrows(
    () =>
      federation.defineTask("t", {
        schema: z.object({}),
        handler: () => {},
        maxDeliveries: 0,
      }),
    TaskDefinitionError,
    "maxDeliveries",
  );
});
