// Task results end to end: a handler's return value through a real
// in-process queue to the status record, watchTask() and a real loopback
// webhook receiver.
import {
  assert,
  assertEquals,
  assertThrows,
  startTestServer,
  test,
  waitUntil,
  within,
  withLogs,
} from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../federation/federation.ts";
import { withWorkers } from "../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { WebhookPayload } from "../operator/webhooks/types.ts";
import { verifyWebhookRequest } from "../operator/webhooks/verify.ts";
import { TaskDefinitionError } from "./errors.ts";
import type { TaskStatus } from "../operator/status/store.ts";

const base = new URL("https://example.com/");
const secret = "webhook-test-secret-0123456789";

function federationOn(queue: InProcessMessageQueue): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
}

async function completedStatus(
  federation: Federation<void>,
  id: string,
): Promise<TaskStatus> {
  let status: TaskStatus | undefined;
  await waitUntil(async () => {
    status = await federation.getTaskStatus(id);
    return status?.state === "completed";
  }, { what: () => `task ${id} to complete; last ${status?.state}` });
  return status!;
}

test("a handler's result is kept with the completed status and sent to watchers", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const resize = federation.defineTask("resize", {
    schema: z.object({ album: z.string() }),
    handler: (_ctx, data) => ({ album: data.album, sizes: [64, 128], cover: null }),
  });
  const ctx = federation.createContext(base, undefined);
  const enqueued = await ctx.enqueueTask(resize, { album: "a1" });
  assert(enqueued.status === "enqueued");
  const updates: TaskStatus[] = [];
  const watching = (async () => {
    for await (const update of federation.watchTask(enqueued.messageId)) {
      updates.push(update.status);
    }
  })();
  await withWorkers(federation, async () => {
    const status = await completedStatus(federation, enqueued.messageId);
    assertEquals(status.result, { album: "a1", sizes: [64, 128], cover: null });
    assertEquals(status.resultOmitted, undefined);
    await within(watching, "watchTask() to end after the completed update");
  });
  const last = updates.at(-1)!;
  assertEquals(last.state, "completed");
  assertEquals(last.result, { album: "a1", sizes: [64, 128], cover: null });
});

test("a task returning nothing has no result", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const task = federation.defineTask("quiet", { schema: z.object({}), handler: () => {} });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await completedStatus(federation, enqueued.messageId);
    assertEquals("result" in status, false);
    assertEquals("resultOmitted" in status, false);
  });
});

test("a result over maxResultBytes is replaced by a marker; the task still completes", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const big = federation.defineTask("big", {
    schema: z.object({}),
    handler: () => ({ text: "x".repeat(200) }),
    maxResultBytes: 100,
  });
  await withLogs(async (records) => {
    const enqueued = await federation.createContext(base, undefined).enqueueTask(big, {});
    assert(enqueued.status === "enqueued");
    await withWorkers(federation, async () => {
      const status = await completedStatus(federation, enqueued.messageId);
      assertEquals(status.result, undefined);
      assertEquals(status.resultOmitted?.reason, "too-large");
      assertEquals(status.resultOmitted?.limit, 100);
      assertEquals(status.resultOmitted?.bytes, JSON.stringify({ text: "x".repeat(200) }).length);
    });
    assert(
      records.some((record) =>
        record.level === "warning" && record.properties.messageId === enqueued.messageId &&
        record.properties.limit === 100
      ),
      "a warning names the task and the limit",
    );
  });
});

test("a result that is not JSON-compatible is replaced by a marker", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const odd = federation.defineTask("odd", {
    schema: z.object({}),
    // Cast past the compile-time check, as plain JavaScript would.
    handler: () => ({ when: new Date(0) }) as unknown as string,
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(odd, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await completedStatus(federation, enqueued.messageId);
    assertEquals(status.resultOmitted?.reason, "not-json");
    assert(status.resultOmitted?.message.includes("the result.when is a Date"));
  });
});

test("defineTask refuses a maxResultBytes that is not an integer from 0 to 1 MiB", () => {
  const federation = federationOn(new InProcessMessageQueue());
  for (const maxResultBytes of [-1, 1.5, 2 * 1024 * 1024]) {
    const error = assertThrows(
      () =>
        federation.defineTask(`t${maxResultBytes}`, {
          schema: z.object({}),
          handler: () => {},
          maxResultBytes,
        }),
      TaskDefinitionError,
    );
    assertEquals(error.option, "maxResultBytes");
  }
});

test("the completed webhook carries the result", async () => {
  const received: WebhookPayload[] = [];
  await using server = await startTestServer(async (request) => {
    received.push(await verifyWebhookRequest(request, { secret, toleranceSeconds: 60 }));
    return new Response(null, { status: 204 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const count = federation.defineTask("count", {
    schema: z.object({ n: z.number() }),
    handler: (_ctx, data) => ({ doubled: data.n * 2 }),
  });
  const big = federation.defineTask("big-hooked", {
    schema: z.object({}),
    handler: () => "y".repeat(50),
    maxResultBytes: 10,
  });
  await federation.addWebhook({ url: server.url, events: ["completed"], secret });
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    await ctx.enqueueTask(count, { n: 21 });
    await ctx.enqueueTask(big, {});
    await waitUntil(() => received.length >= 2, { what: "two webhook requests" });
  });
  const byName = Object.fromEntries(received.map((payload) => [payload.task.name, payload]));
  assertEquals(byName.count.task.result, { doubled: 42 });
  assertEquals(byName["big-hooked"].task.result, undefined);
  assertEquals(byName["big-hooked"].task.resultOmitted?.reason, "too-large");
});
