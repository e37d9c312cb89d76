// A remote party's failure is logged with its message and no stack; an
// error of the application's own keeps its stack.  Through real
// deliveries and real requests on loopback.
import { createServer } from "node:net";
import {
  assert,
  assertEquals,
  assertMatch,
  deferred,
  test,
  within,
  withLogs,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import type { LogRecord } from "@logtape/logtape";
import { fetchRemote } from "../activitypub/network/outgoing-http.ts";
import { DeliveryError } from "../activitypub/outbox/errors.ts";
import { createFederation } from "../federation/federation.ts";
import { registerTestActor, startInboxServer } from "../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { isRemoteFailure, loggedError } from "./remote-failure.ts";

const anything = {
  "~standard": { version: 1, vendor: "test", validate: (value: unknown) => ({ value }) },
} as const;

/** The warnings that a message will be retried. */
function retryWarnings(records: readonly LogRecord[]): LogRecord[] {
  return records.filter((record) =>
    record.level === "warning" && record.category.join(".") === "fedwork.processing" &&
    String(record.rawMessage).includes("retrying")
  );
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test("a delivery an inbox answered 500 is retried with a warning without a stack", async () => {
  // Both knocks of the first attempt fail (one per signature scheme).
  await using server = await startInboxServer([500, 500, 202]);
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxRetryPolicy: () => millisecondsToDuration(10),
  });
  registerTestActor(federation);
  const delivered = deferred<void>();
  federation.on("completed", (event) => {
    if (event.kind === "outbox") delivered.resolve();
  });
  const controller = new AbortController();
  await withLogs(async (records) => {
    const running = federation.startQueue(undefined, { signal: controller.signal });
    try {
      await federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
        { identifier: "alice" },
        { id: new URL("https://remote.example/users/bob"), inboxId: new URL("/inbox", server.url) },
        new Create({
          id: new URL("https://example.com/activities/1"),
          actor: new URL("https://example.com/users/alice"),
          object: new Note({ content: "Hello" }),
        }),
      );
      await within(delivered.promise, "the second attempt to be delivered");
    } finally {
      controller.abort();
      await within(running, "the workers to stop");
    }
    const [warning] = retryWarnings(records);
    assert(warning != null, "a retry warning");
    const { error } = warning.properties;
    assertEquals(typeof error, "string");
    assertMatch(String(error), /^DeliveryError: .*500/);
    assert(!String(error).includes("\n    at "), "no stack");
  });
});

test("a task's own error keeps its stack; a remote request's failure does not", async () => {
  const url = `http://127.0.0.1:${await closedPort()}/page`;
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
    taskRetryPolicy: ({ attempts }) => attempts >= 2 ? null : millisecondsToDuration(10),
  });
  const bug = federation.defineTask("bug", {
    schema: anything,
    handler() {
      throw new Error("A bug in the handler.");
    },
  });
  const preview = federation.defineTask("preview", {
    schema: anything,
    async handler() {
      await fetchRemote(url, { userAgent: "Test/1.0", allowPrivateAddress: true });
    },
  });
  const failed = new Set<string>();
  const bothFailed = deferred<void>();
  federation.on("failed", (event) => {
    failed.add(event.taskName!);
    if (failed.size === 2) bothFailed.resolve();
  });
  const controller = new AbortController();
  await withLogs(async (records) => {
    const running = federation.startQueue(undefined, { signal: controller.signal });
    try {
      const ctx = federation.createContext(new URL("https://example.com/"), undefined);
      await ctx.enqueueTask(bug, null);
      await ctx.enqueueTask(preview, null);
      await within(bothFailed.promise, "both tasks to fail for good");
    } finally {
      controller.abort();
      await within(running, "the workers to stop");
    }
    const byTask = new Map(
      retryWarnings(records).map((record) => [record.properties.taskName, record.properties.error]),
    );
    assert(byTask.get("bug") instanceof Error, "the bug's error is kept, with its stack");
    assertEquals(typeof byTask.get("preview"), "string");
    assert(!String(byTask.get("preview")).includes("\n    at "), "no stack");
    // Giving up (at error level) follows the same rule.
    const gaveUp = records.filter((record) =>
      record.level === "error" && String(record.rawMessage).startsWith("Gave up")
    );
    const gaveUpByTask = new Map(
      gaveUp.map((record) => [record.properties.taskName, record.properties.error]),
    );
    assert(gaveUpByTask.get("bug") instanceof Error);
    assertEquals(typeof gaveUpByTask.get("preview"), "string");
  });
});

test("isRemoteFailure() follows causes; loggedError() keeps other errors as they are", () => {
  const delivery = new DeliveryError("https://remote.example/inbox", 503, "busy");
  assert(isRemoteFailure(delivery));
  const wrapped = new Error("Could not notify the followers.", { cause: delivery });
  assert(isRemoteFailure(wrapped));
  assertEquals(loggedError(wrapped), "Error: Could not notify the followers.");
  const own = new TypeError("undefined is not a function");
  assertEquals(loggedError(own), own);
  assertEquals(isRemoteFailure("a string"), false);
});
