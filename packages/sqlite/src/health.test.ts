// The readiness endpoint on SQLite: ready on a real database file, 503
// naming the queue when it holds more ready messages than allowed, and
// 503 naming the store when its file cannot be opened.
import { join } from "node:path";
import { tmpdir } from "node:os";
import { assertEquals, deferred, startTestServer, test, within } from "@fedify/fixture";
import {
  createFederation,
  createHealthHandler,
  type HealthHandler,
  type HealthReport,
} from "@fedwork/core";
import { SqliteKvStore } from "./kv-store.ts";
import { SqliteMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

/** Serves a health handler on loopback (it takes no address from this server). */
function serve(health: HealthHandler) {
  return startTestServer((request) => health(request));
}

const TOKEN = "health-check-token-for-tests";
const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };

/** A Standard Schema that takes any value. */
const anything = {
  "~standard": { version: 1, vendor: "test", validate: (value: unknown) => ({ value }) },
} as const;

function createTestNamespace(): string {
  return `fedwork-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

async function readiness(url: URL): Promise<[number, HealthReport]> {
  const response = await fetch(new URL("/readyz", url), auth);
  return [response.status, await response.json() as HealthReport];
}

test("readiness on SQLite answers 200, then 503 once the queue lags", async () => {
  const namespace = createTestNamespace();
  const path = databasePath(namespace);
  await using kv = new SqliteKvStore({ path });
  await using queue = new SqliteMessageQueue({ path });
  const federation = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const noop = federation.defineTask("noop", { schema: anything, handler() {} });
  const server = await serve(
    createHealthHandler(federation, {
      token: TOKEN,
      maxReadyMessages: 2,
      cacheFor: { milliseconds: 1 },
    }),
  );
  try {
    const [status, report] = await readiness(server.url);
    assertEquals(report.reasons, []);
    assertEquals(status, 200);
    assertEquals(
      report.engines.map(({ kind, type, status }) => [kind, type, status]),
      // One SQLite queue gives each role a table of its own (separateRoles).
      [
        ["kv", "SqliteKvStore", "ok"],
        ["queue", "SqliteMessageQueue", "ok"],
        ["queue", "SqliteMessageQueue", "ok"],
        ["queue", "SqliteMessageQueue", "ok"],
        ["queue", "SqliteMessageQueue", "ok"],
        ["pubsub", "InProcessPubSub", "ok"],
      ],
    );
    assertEquals(
      report.engines.filter(({ kind }) => kind === "queue").map(({ name }) => name),
      ["inbox", "outbox", "fanout", "task"],
    );
    // No worker runs: the tasks wait, ready.
    const ctx = federation.createContext(new URL("https://app.example/"), undefined);
    for (let i = 0; i < 3; i++) await ctx.enqueueTask(noop, i);
    const [lagging, lagged] = await readiness(server.url);
    assertEquals(lagging, 503);
    assertEquals(lagged.reasons, [
      "queue task (SqliteMessageQueue): 3 ready messages, above maxReadyMessages 2",
    ]);
    // Workers drain the queue, and readiness comes back.
    const controller = new AbortController();
    const ready = deferred<void>();
    const running = federation.startQueue(undefined, {
      signal: controller.signal,
      onWorkerEvent: (event) => event.type === "ready" && ready.resolve(),
    });
    try {
      await within(
        (async () => {
          while ((await readiness(server.url))[0] !== 200) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })(),
        "readiness to come back",
      );
    } finally {
      controller.abort();
      await within(running, "the worker to stop");
    }
  } finally {
    await server.close();
    await cleanup(namespace);
  }
});

test("readiness answers 503 naming a SQLite store whose file cannot be opened", async () => {
  const namespace = createTestNamespace();
  const path = join(tmpdir(), `${namespace}-missing-folder`, "store.sqlite");
  await using kv = new SqliteKvStore({ path });
  await using queue = new SqliteMessageQueue({ path: databasePath(namespace) });
  const federation = createFederation<void>({ kv, queue, manuallyStartQueue: true });
  const server = await serve(createHealthHandler(federation, { token: TOKEN }));
  try {
    const [status, report] = await readiness(server.url);
    assertEquals(status, 503);
    assertEquals(report.engines[0].kind, "kv");
    assertEquals(report.engines[0].status, "failing");
    assertEquals(report.reasons.length, 1);
    assertEquals(report.reasons[0].startsWith("kv (SqliteKvStore): "), true, report.reasons[0]);
  } finally {
    await server.close();
    await cleanup(namespace);
  }
});
