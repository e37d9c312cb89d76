import { assert, assertStrictEquals, assertThrows, test } from "@fedify/fixture";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { TaskQueueNotConfiguredError } from "./errors.ts";
import { resolveTaskQueue } from "./routing.ts";

test("resolveTaskQueue prefers the task's own queue, then the task queue, then the outbox queue", async () => {
  await using own = new InProcessMessageQueue();
  await using taskQueue = new InProcessMessageQueue();
  await using outboxQueue = new InProcessMessageQueue();
  const resolution = "fallback";
  assertStrictEquals(
    resolveTaskQueue({ name: "t", queue: own }, { taskQueue, outboxQueue, resolution }),
    own,
  );
  assertStrictEquals(
    resolveTaskQueue({ name: "t" }, { taskQueue, outboxQueue, resolution }),
    taskQueue,
  );
  assertStrictEquals(resolveTaskQueue({ name: "t" }, { outboxQueue, resolution }), outboxQueue);
});

test("resolveTaskQueue in strict mode does not fall back to the outbox queue", async () => {
  await using own = new InProcessMessageQueue();
  await using taskQueue = new InProcessMessageQueue();
  await using outboxQueue = new InProcessMessageQueue();
  const resolution = "strict";
  assertStrictEquals(resolveTaskQueue({ name: "t", queue: own }, { outboxQueue, resolution }), own);
  assertStrictEquals(
    resolveTaskQueue({ name: "t" }, { taskQueue, outboxQueue, resolution }),
    taskQueue,
  );
  const error = assertThrows(
    () => resolveTaskQueue({ name: "digest" }, { outboxQueue, resolution }),
    TaskQueueNotConfiguredError,
    "strict",
  );
  assertStrictEquals(error.taskName, "digest");
});

test("resolveTaskQueue without any queue throws naming the task and how to configure one", () => {
  const error = assertThrows(
    () => resolveTaskQueue({ name: "digest" }, { resolution: "fallback" }),
    TaskQueueNotConfiguredError,
    '"digest"',
  );
  for (const hint of ["queue: { task: ... }", "defineTask"]) {
    assert(error.message.includes(hint), error.message);
  }
});
