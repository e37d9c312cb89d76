// The readiness endpoint on PostgreSQL: ready with every engine on a real
// server, 503 naming the queue when it is on a port nothing listens on.
import { createServer } from "node:net";
import postgres from "postgres";
import { assertEquals, deferred, startTestServer, test, within } from "@fedify/fixture";
import {
  createFederation,
  createHealthHandler,
  type HealthHandler,
  type HealthReport,
} from "@fedwork/core";
import { PostgresKvStore } from "./kv-store.ts";
import { PostgresMessageQueue } from "./message-queue.ts";
import { PostgresPubSub } from "./pubsub.ts";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";

/** Serves a health handler on loopback (it takes no address from this server). */
function serve(health: HealthHandler) {
  return startTestServer((request) => health(request));
}

const TOKEN = "health-check-token-for-tests";
const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };

function createTestTable(): string {
  return `fedwork_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

async function dropTables(...tables: string[]): Promise<void> {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    for (const table of tables) await sql.unsafe(`DROP TABLE IF EXISTS "${table}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** A loopback port nothing listens on: one that was free a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test("readiness on PostgreSQL answers 200 with the store, the queue and the pub/sub", async () => {
  const table = createTestTable();
  await using kv = new PostgresKvStore(POSTGRES_URL, { tableName: table });
  await using queue = new PostgresMessageQueue(POSTGRES_URL, { tableName: `${table}_queue` });
  await using pubsub = new PostgresPubSub(POSTGRES_URL, { prefix: `${table}:` });
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
      [["kv", "PostgresKvStore", "ok"], ["queue", "PostgresMessageQueue", "ok"], [
        "pubsub",
        "PostgresPubSub",
        "ok",
      ]],
    );
    assertEquals(report.workers.alive, 1);
  } finally {
    controller.abort();
    await within(running, "the worker to stop");
    await server.close();
    await dropTables(table, `${table}_queue`);
  }
});

test("readiness answers 503 naming a PostgreSQL queue on a closed port", async () => {
  const table = createTestTable();
  await using kv = new PostgresKvStore(POSTGRES_URL, { tableName: table });
  await using queue = new PostgresMessageQueue(
    `postgres://postgres@127.0.0.1:${await closedPort()}/test`,
    { tableName: `${table}_queue` },
  );
  const federation = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const server = await serve(
    createHealthHandler(federation, { token: TOKEN, timeout: { seconds: 1 } }),
  );
  try {
    const response = await fetch(new URL("/readyz", server.url), auth);
    assertEquals(response.status, 503);
    const report = await response.json() as HealthReport;
    const failing = report.engines.filter((engine) => engine.status === "failing");
    assertEquals(failing.map(({ kind, type }) => [kind, type]), [[
      "queue",
      "PostgresMessageQueue",
    ]]);
    assertEquals(
      report.reasons[0].startsWith("queue inbox+outbox+fanout+task (PostgresMessageQueue): "),
      true,
      report.reasons[0],
    );
  } finally {
    await server.close();
    await dropTables(table);
  }
});
