// Federation.close(): the workers stop taking messages, running handlers
// get a grace, then their signals abort and their messages go back to the
// queue.  The real processes and signals are in @fedwork/testing's
// testGracefulShutdown(), which every engine runs.
import {
  assert,
  assertEquals,
  assertRejects,
  assertThrows,
  deferred,
  test,
  within,
} from "@fedify/fixture";
import { z } from "zod";
import { UnknownOptionError } from "../../options/known-options.ts";
import type { MessageEvent } from "../../processing/events.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import { closeOnSignals } from "./close-on-signals.ts";

const base = new URL("https://example.com/");

function federationOn(queue: InProcessMessageQueue): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
  });
}

/** A task that waits for its signal (`hold`) or for `release`. */
function defineWaitingTask(
  federation: Federation<void>,
  started: { resolve(id: string): void },
  release?: Promise<void>,
) {
  return federation.defineTask("waiting", {
    schema: z.object({}),
    async handler(ctx) {
      started.resolve(ctx.task.id);
      const { signal } = ctx.task;
      await new Promise<void>((resolve, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        release?.then(resolve);
      });
    },
  });
}

test("close() lets a running task finish within the grace, without aborting its signal", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const started = deferred<string>();
  const release = deferred();
  const task = defineWaitingTask(federation, started, release.promise);
  const events: MessageEvent[] = [];
  federation.on("completed", (event) => void events.push(event));
  federation.on("retrying", (event) => void events.push(event));
  const workers = federation.startQueue(undefined);
  await federation.createContext(base, undefined).enqueueTask(task, {});
  const id = await within(started.promise, "the task to start");
  const closing = federation.close({ grace: { minutes: 10 } });
  // The workers stopped taking messages, but the task goes on.
  await federation.createContext(base, undefined).enqueueTask(task, {});
  release.resolve();
  await within(closing, "close() to resolve once the task finished");
  await within(workers, "startQueue() to resolve");
  assertEquals(events.map((event) => [event.type, event.messageId]), [["completed", id]]);
});

test("close() aborts a task still running after the grace; its message goes back to the queue with no attempt spent", async () => {
  await using queue = new InProcessMessageQueue({ redeliveryDelay: { milliseconds: 0 } });
  const first = federationOn(queue);
  const started = deferred<string>();
  const task = defineWaitingTask(first, started);
  const retrying = deferred<MessageEvent>();
  first.on("retrying", (event) => retrying.resolve(event));
  const workers = first.startQueue(undefined);
  await first.createContext(base, undefined).enqueueTask(task, {});
  const id = await within(started.promise, "the task to start");
  await within(first.close({ grace: { milliseconds: 50 } }), "close() to resolve");
  await within(workers, "startQueue() to resolve");
  const event = await within(retrying.promise, "the retrying event");
  assertEquals(event.type === "retrying" ? event.reason : undefined, "shutdown");
  // Another worker on the same queue gets the message again, unchanged.
  const second = federationOn(queue);
  const rerun = deferred<{ id: string; attempt: number }>();
  second.defineTask("waiting", {
    schema: z.object({}),
    handler: (ctx) => rerun.resolve({ id: ctx.task.id, attempt: ctx.task.attempt }),
  });
  const controller = new AbortController();
  const again = second.startQueue(undefined, { signal: controller.signal });
  assertEquals(await within(rerun.promise, "the second worker to run it"), { id, attempt: 0 });
  controller.abort();
  await within(again, "the second worker to stop");
});

test("a second close() with no grace aborts the running handlers at once", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const started = deferred<string>();
  const task = defineWaitingTask(federation, started);
  const workers = federation.startQueue(undefined);
  await federation.createContext(base, undefined).enqueueTask(task, {});
  await within(started.promise, "the task to start");
  const firstClose = federation.close({ grace: { minutes: 10 } });
  await within(federation.close({ grace: { seconds: 0 } }), "the second close() to resolve");
  await within(firstClose, "the first close() to resolve too");
  await within(workers, "startQueue() to resolve");
});

test("startQueue() after close() is refused, and close() without workers resolves", async () => {
  await using federation = federationOn(new InProcessMessageQueue());
  await within(federation.close(), "close() to resolve");
  await assertRejects(() => federation.startQueue(undefined), TypeError, "after close()");
});

test("close() checks its options, naming them", async () => {
  const federation = federationOn(new InProcessMessageQueue());
  await assertRejects(
    () => federation.close({ grace: { seconds: -1 } }),
    RangeError,
    "grace",
  );
  await assertRejects(
    // @ts-expect-error: misspelt on purpose
    () => federation.close({ grce: { seconds: 1 } }),
    UnknownOptionError,
    "did you mean grace?",
  );
});

test("closeOnSignals() checks its arguments at call time, naming the option", () => {
  const federation = federationOn(new InProcessMessageQueue());
  assertThrows(
    // @ts-expect-error: not a federation
    () => closeOnSignals({}),
    TypeError,
    "close()",
  );
  assertThrows(
    // @ts-expect-error: not a signal it handles
    () => closeOnSignals(federation, { signals: ["SIGKILL"] }),
    TypeError,
    "signals option",
  );
  assertThrows(() => closeOnSignals(federation, { signals: [] }), TypeError, "signals option");
  assertThrows(
    () => closeOnSignals(federation, { grace: { seconds: -5 } }),
    RangeError,
    "grace",
  );
  assertThrows(
    // @ts-expect-error: misspelt on purpose
    () => closeOnSignals(federation, { grase: { seconds: 1 } }),
    UnknownOptionError,
    "did you mean grace?",
  );
  // Valid: listens until disposed of, closing nothing.
  using closing = closeOnSignals(federation, { grace: { seconds: 1 }, signals: ["SIGTERM"] });
  assert(closing.closed instanceof Promise);
});
