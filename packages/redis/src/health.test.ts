// The readiness endpoint on Redis: ready with every engine on a real
// server, 503 naming the store when it is on a port nothing listens on.
import { createServer } from "node:net";
import { assert, assertEquals, deferred, startTestServer, test, within } from "@fedify/fixture";
import {
  createFederation,
  createHealthHandler,
  type HealthHandler,
  type HealthReport,
} from "@fedwork/core";
import { RedisKvStore } from "./kv-store.ts";
import { RedisMessageQueue } from "./message-queue.ts";
import { RedisPubSub } from "./pubsub.ts";
import { cleanup, deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";

/** Serves a health handler on loopback (it takes no address from this server). */
function serve(health: HealthHandler) {
  return startTestServer((request) => health(request));
}

const TOKEN = "health-check-token-for-tests";
const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };

function createTestNamespace(): string {
  return `fedwork-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** A loopback port nothing listens on: one that was free a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test("readiness on Redis answers 200 with the store, the queue and the pub/sub", async () => {
  const namespace = createTestNamespace();
  await using kv = new RedisKvStore({ url: REDIS_URL, prefix: namespace });
  await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: namespace });
  await using pubsub = new RedisPubSub({ url: REDIS_URL, prefix: namespace });
  const federation = createFederation<void>({ kv, queue, pubsub, manuallyStartQueue: true });
  const controller = new AbortController();
  const ready = deferred<void>();
  const running = federation.startQueue(undefined, {
    signal: controller.signal,
    onWorkerEvent: (event) => event.type === "ready" && ready.resolve(),
  });
  const server = await serve(
    createHealthHandler(federation, { token: TOKEN, minWorkers: 1 }),
  );
  try {
    await within(ready.promise, "the worker to be ready");
    const response = await fetch(new URL("/readyz", server.url), auth);
    const report = await response.json() as HealthReport;
    assertEquals(report.reasons, []);
    assertEquals(response.status, 200);
    assertEquals(
      report.engines.map(({ kind, type, status }) => [kind, type, status]),
      [["kv", "RedisKvStore", "ok"], ["queue", "RedisMessageQueue", "ok"], [
        "pubsub",
        "RedisPubSub",
        "ok",
      ]],
    );
    assertEquals(report.workers.alive, 1);
  } finally {
    controller.abort();
    await within(running, "the worker to stop");
    await server.close();
    await deleteKeys(`${namespace}:`);
    await cleanup(namespace);
  }
});

test("readiness answers 503 naming a Redis store on a closed port", async () => {
  const namespace = createTestNamespace();
  const url = `redis://127.0.0.1:${await closedPort()}`;
  // Not reconnecting: with ioredis's default retries, disposing of the
  // store waits until the pending probe's command gives up (over a minute).
  await using kv = new RedisKvStore({
    url,
    prefix: namespace,
    redisOptions: { retryStrategy: () => null, maxRetriesPerRequest: 0 },
  });
  await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: namespace });
  const federation = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const server = await serve(
    createHealthHandler(federation, { token: TOKEN, timeout: { milliseconds: 500 } }),
  );
  try {
    const response = await fetch(new URL("/readyz", server.url), auth);
    assertEquals(response.status, 503);
    const report = await response.json() as HealthReport;
    assertEquals(report.ready, false);
    const store = report.engines.find((engine) => engine.kind === "kv")!;
    assertEquals(store.status, "failing");
    assert(
      report.reasons.some((reason) => reason.startsWith("kv (RedisKvStore): ")),
      report.reasons.join("; "),
    );
    // The queue on the real server is still reported reachable.
    assertEquals(report.engines.find((engine) => engine.kind === "queue")!.status, "ok");
  } finally {
    await server.close();
    await cleanup(namespace);
  }
});
