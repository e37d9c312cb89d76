// Measures webhook signing and verification (HMAC-SHA256 over a ~400-byte
// payload, one at a time), and how fast a federation drains typed tasks on
// an in-process queue with no webhook, and with one webhook whose loopback
// receiver verifies every request.  Bounded: fixed counts per case.
// Run with node --conditions=fedwork-source, deno run -A, or bun:
// bench/webhooks.ts
import { startTestServer } from "@fedwork/testing";
import { z } from "zod";
import {
  createFederation,
  InProcessMessageQueue,
  MemoryKvStore,
  signWebhookRequest,
  verifyWebhookRequest,
} from "@fedwork/core";

const N = 2000;
const TASKS = 1000;
const secret = "bench-secret-0123456789abcdef";
const body = JSON.stringify({
  id: crypto.randomUUID(),
  type: "completed",
  createdAt: new Date().toISOString(),
  webhookId: crypto.randomUUID(),
  task: {
    id: crypto.randomUUID(),
    name: "resize",
    attempt: 0,
    enqueuedAt: new Date().toISOString(),
    durationMs: 12,
  },
});
const eventId = JSON.parse(body).id;

async function rate(label: string, count: number, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 20; i++) await run(); // warm-up
  const start = performance.now();
  for (let i = 0; i < count; i++) await run();
  const seconds = (performance.now() - start) / 1000;
  console.log(`${label.padEnd(48)} ${Math.round(count / seconds).toLocaleString("en")} ops/s`);
}

await rate(
  "signWebhookRequest",
  N,
  () => signWebhookRequest({ secret, eventId, eventType: "completed", body }),
);
const headers = await signWebhookRequest({ secret, eventId, eventType: "completed", body });
await rate("verifyWebhookRequest", N, () =>
  verifyWebhookRequest(
    new Request("http://127.0.0.1/hooks", { method: "POST", headers, body }),
    { secret },
  ));

async function drain(withWebhook: boolean): Promise<void> {
  let received = 0;
  let allReceived!: () => void;
  const receivedAll = new Promise<void>((resolve) => allReceived = resolve);
  const server = await startTestServer(async (request) => {
    await verifyWebhookRequest(request, { secret });
    if (++received === TASKS) allReceived();
    return new Response(null, { status: 204 });
  });
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  let done = 0;
  let allDone!: () => void;
  const finished = new Promise<void>((resolve) => allDone = resolve);
  const task = federation.defineTask("resize", {
    schema: z.object({ n: z.number() }),
    handler: () => {
      if (++done === TASKS) allDone();
    },
  });
  if (withWebhook) await federation.addWebhook({ url: server.url, events: ["completed"], secret });
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  const start = performance.now();
  await ctx.enqueueTaskMany(task, Array.from({ length: TASKS }, (_, n) => ({ n })));
  await finished;
  const tasksSeconds = (performance.now() - start) / 1000;
  if (withWebhook) await receivedAll;
  const allSeconds = (performance.now() - start) / 1000;
  controller.abort();
  await workers;
  await server.close();
  await queue[Symbol.asyncDispose]();
  const label = withWebhook ? "drain 1,000 tasks, one webhook" : "drain 1,000 tasks, no webhook";
  console.log(
    `${label.padEnd(48)} ${Math.round(TASKS / tasksSeconds).toLocaleString("en")} tasks/s` +
      (withWebhook
        ? `; all ${TASKS} webhook requests verified after ${allSeconds.toFixed(2)} s`
        : ""),
  );
}

await drain(false);
await drain(true);
