import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  deferred,
  test,
} from "@fedify/fixture";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import postgres from "postgres";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";
import { PostgresClosedError } from "./errors.ts";
import { PostgresMessageQueue } from "./message-queue.ts";

const TIMEOUT_MS = 30_000;

function uniqueTable(): string {
  return `fedwork_pgtest_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}.`)), TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test("PostgresMessageQueue rejects invalid options naming the option", () => {
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { tableName: 'x"; DROP' }),
    TypeError,
    "tableName",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { schema: "a.b" }),
    TypeError,
    "schema",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { channelName: "a-b" }),
    TypeError,
    "channelName",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { leaseTime: { seconds: 0 } }),
    RangeError,
    "The leaseTime option must be a positive duration",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { prefetch: -1 }),
    RangeError,
    "The prefetch option must be a non-negative integer; got -1.",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { prefetch: 32, maxPrefetch: 8 }),
    RangeError,
    "The maxPrefetch option (8) must be at least the prefetch option (32)",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { maxPrefetch: 1.5 }),
    RangeError,
    "maxPrefetch",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { pollInterval: { seconds: -1 } }),
    RangeError,
    "pollInterval",
  );
  assertThrows(
    () => new PostgresMessageQueue(POSTGRES_URL, { concurrency: 0 }),
    RangeError,
    "concurrency",
  );
});

test("PostgresMessageQueue rejects enqueue after it was disposed", async () => {
  const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName: uniqueTable() });
  await queue[Symbol.asyncDispose]();
  await assertRejects(() => queue.enqueue({ a: 1 }), PostgresClosedError);
});

test("PostgresMessageQueue enqueue rejects when the client it was given is closed", async () => {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  const queue = new PostgresMessageQueue(sql, { tableName: uniqueTable() });
  await sql.end();
  await assertRejects(() => queue.enqueue({ a: 1 }));
});

test("PostgresMessageQueue keeps listening after its connections are terminated", async () => {
  const tableName = uniqueTable();
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  const applicationName = `fedwork_reconnect_${tableName.slice(-12)}`;
  const client = postgres(POSTGRES_URL, {
    onnotice: () => {},
    connection: { application_name: applicationName },
  });
  const queue = new PostgresMessageQueue(client, { tableName, pollInterval: { seconds: 1 } });
  const controller = new AbortController();
  const received: string[] = [];
  let first!: () => void;
  let second!: () => void;
  const gotFirst = new Promise<void>((r) => first = r);
  const gotSecond = new Promise<void>((r) => second = r);
  const listening = queue.listen((message: string) => {
    received.push(message);
    if (message === "before") first();
    if (message === "after") second();
  }, { signal: controller.signal });
  try {
    await queue.enqueue("before");
    await within(gotFirst, "the message before the disconnect");
    const killed = await admin`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = ${applicationName}`;
    assert(killed.length > 0, "no connection was terminated");
    const producer = new PostgresMessageQueue(admin, { tableName, initialized: true });
    await producer.enqueue("after");
    await within(gotSecond, "the message after the disconnect");
    assertEquals(received, ["before", "after"]);
  } finally {
    controller.abort();
    await listening;
    await queue[Symbol.asyncDispose]();
    await client.end({ timeout: 5 });
    await admin.unsafe(`DROP TABLE IF EXISTS "${tableName}"`);
    await admin.end({ timeout: 5 });
  }
});

test("PostgresMessageQueue renews the lease of a handler running longer than it", async () => {
  const tableName = uniqueTable();
  const queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName,
    leaseTime: { milliseconds: 600 },
  });
  const other = new PostgresMessageQueue(POSTGRES_URL, {
    tableName,
    leaseTime: { milliseconds: 600 },
  });
  const controller = new AbortController();
  let started!: () => void;
  const startedPromise = new Promise<void>((r) => started = r);
  let deliveries = 0;
  const listening = queue.listen(async () => {
    deliveries++;
    started();
    await new Promise((r) => setTimeout(r, 2_400));
  }, { signal: controller.signal });
  try {
    await queue.enqueue("long");
    await within(startedPromise, "the handler to start");
    const otherListening = other.listen(() => {
      deliveries++;
    }, { signal: controller.signal });
    // The handler is still running: its row stays in flight.
    const depth = await other.getDepth();
    assertEquals(depth, { queued: 1, ready: 0, delayed: 0 });
    controller.abort();
    await within(Promise.all([listening, otherListening]), "listen() to resolve");
    assertEquals(deliveries, 1);
    assertEquals(await other.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  } finally {
    await queue.drop();
    await queue[Symbol.asyncDispose]();
    await other[Symbol.asyncDispose]();
  }
});

test("PostgresMessageQueue runs up to concurrency handlers at once", async () => {
  const tableName = uniqueTable();
  await using queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName,
    concurrency: 3,
    prefetch: 0,
  });
  const controller = new AbortController();
  let running = 0;
  let allStarted!: () => void;
  const started = new Promise<void>((r) => allStarted = r);
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const listening = queue.listen(async () => {
    if (++running === 3) allStarted();
    await released;
    running--;
  }, { signal: controller.signal });
  try {
    await queue.enqueueMany([1, 2, 3, 4]);
    await within(started, "three handlers running at once");
    assertEquals((await queue.getDepth()).ready, 1);
  } finally {
    controller.abort();
    release();
    await within(listening, "listen() to resolve");
    await queue.drop();
  }
});

test("PostgresMessageQueue deletes the handled messages when it is disposed", async () => {
  const tableName = uniqueTable();
  const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName, concurrency: 2 });
  const handled = deferred();
  let count = 0;
  const listening = queue.listen(() => {
    if (++count === 2) handled.resolve();
  });
  await queue.enqueueMany(["a", "b"]);
  await within(handled.promise, "both messages");
  // Disposing (no abort) stops the listener, which must still acknowledge.
  await queue[Symbol.asyncDispose]();
  await within(listening, "listen() to resolve");
  await using check = new PostgresMessageQueue(POSTGRES_URL, { tableName });
  assertEquals((await check.getDepth()).queued, 0);
  await check.drop();
});

test("PostgresMessageQueue holds later same-key messages behind a delayed one", async () => {
  const tableName = uniqueTable();
  await using queue = new PostgresMessageQueue(POSTGRES_URL, { tableName });
  const controller = new AbortController();
  const received: string[] = [];
  let finish!: () => void;
  const finished = new Promise<void>((r) => finish = r);
  const listening = queue.listen((message: string) => {
    received.push(message);
    if (received.length === 3) finish();
  }, { signal: controller.signal });
  try {
    await queue.enqueue("delayed-a", { orderingKey: "a", delay: { milliseconds: 800 } });
    await queue.enqueue("ready-a", { orderingKey: "a" });
    await queue.enqueue("ready-b", { orderingKey: "b" });
    await within(finished, "three messages");
    assertEquals(received, ["ready-b", "delayed-a", "ready-a"]);
  } finally {
    controller.abort();
    await within(listening, "listen() to resolve");
    await queue.drop();
  }
});

test("PostgresMessageQueue creates its table once when many instances start at once", async () => {
  const tableName = uniqueTable();
  const queues = Array.from(
    { length: 5 },
    () => new PostgresMessageQueue(POSTGRES_URL, { tableName, schema: tableName }),
  );
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    await Promise.all(queues.map((queue, i) => queue.enqueue(i)));
    assertEquals((await queues[0].getDepth()).queued, 5);
  } finally {
    await Promise.all(queues.map((queue) => queue[Symbol.asyncDispose]()));
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${tableName}" CASCADE`);
    await admin.end({ timeout: 5 });
  }
});

test("PostgresMessageQueue keeps a failed message for one lease and logs its id", async () => {
  const records: LogRecord[] = [];
  await configure({
    sinks: { buffer: (record: LogRecord) => records.push(record) },
    loggers: [
      { category: ["fedwork", "postgres"], sinks: ["buffer"], lowestLevel: "debug" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
    reset: true,
  });
  // A lease far longer than the test: the message must stay put.
  const queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName: uniqueTable(),
    leaseTime: { minutes: 10 },
  });
  try {
    const controller = new AbortController();
    const failing = deferred();
    const listening = queue.listen(() => {
      failing.resolve();
      throw new Error("Thrown on purpose.");
    }, { signal: controller.signal });
    await queue.enqueue({ fails: true });
    await within(failing.promise, "the handler to run");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(await queue.getDepth(), { queued: 1, ready: 0, delayed: 1 });
    const failure = records.find((record) => record.level === "error");
    assert(failure != null, "The failure was not logged as an error.");
    assertEquals(typeof failure.properties.messageId, "string");
  } finally {
    await reset();
    await queue.drop();
    await queue[Symbol.asyncDispose]();
  }
});

test("PostgresMessageQueue redeliver() leaves a message whose lease another worker took", async () => {
  const tableName = uniqueTable();
  const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName });
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const controller = new AbortController();
    const rejection = deferred<unknown>();
    const listening = queue.listen(async (_message, redelivery) => {
      // As if this worker's lease had run out and another had claimed it.
      await admin.unsafe(`UPDATE "${tableName}" SET lease_owner = gen_random_uuid()`);
      const error = await redelivery!.redeliver("new", { delay: { seconds: 0 } }).then(
        () => undefined,
        (error: unknown) => error,
      );
      rejection.resolve(error);
      throw error;
    }, { signal: controller.signal });
    await queue.enqueue("original");
    const error = await within(rejection.promise, "redeliver() to settle");
    assertInstanceOf(error, Error);
    controller.abort();
    await within(listening, "listen() to resolve");
    // Neither the redelivery nor the release after the throw touched it.
    const rows = await admin.unsafe<{ message: string; leased: boolean }[]>(
      `SELECT message::text AS message, locked_until IS NOT NULL AS leased FROM "${tableName}"`,
    );
    assertEquals(
      rows.map(({ message, leased }) => ({ message, leased })),
      [{ message: '"original"', leased: true }],
    );
  } finally {
    await queue.drop();
    await queue[Symbol.asyncDispose]();
    await admin.end({ timeout: 5 });
  }
});

test("PostgresMessageQueue hands out a redelivered message while its first handler runs", async () => {
  const queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName: uniqueTable(),
    concurrency: 2,
  });
  try {
    const controller = new AbortController();
    const secondVersion = deferred();
    const firstDone = deferred();
    const listening = queue.listen(async (message: { version: number }, redelivery) => {
      if (message.version === 1) return secondVersion.resolve();
      await redelivery!.redeliver({ version: 1 }, { delay: { milliseconds: 0 } });
      // The redelivered row is no longer this handler's: it comes back now.
      await secondVersion.promise;
      firstDone.resolve();
    }, { signal: controller.signal });
    await queue.enqueue({ version: 0 });
    await within(firstDone.promise, "the new version while the first handler ran");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(await queue.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  } finally {
    await queue.drop();
    await queue[Symbol.asyncDispose]();
  }
});

test("PostgresMessageQueue adds the lease_owner, deduplication, priority and deliveries columns to a table made before them", async () => {
  const tableName = uniqueTable();
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  // The table as Fedwork 0.1 created it.
  await admin.unsafe(`CREATE TABLE "${tableName}" (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message json NOT NULL,
    ordering_key text,
    due_at timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`);
  await admin.unsafe(`INSERT INTO "${tableName}" (message) VALUES ('"old"')`);
  const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName });
  try {
    const controller = new AbortController();
    const received = deferred<unknown>();
    const listening = queue.listen((message) => received.resolve(message), {
      signal: controller.signal,
    });
    assertEquals(await within(received.promise, "the message stored before"), "old");
    controller.abort();
    await within(listening, "listen() to resolve");
    // The deduplication columns (0.2) were added too.
    const options = { deduplicationKey: "k", deduplicationTtl: { minutes: 1 } };
    assertEquals(await queue.enqueueDeduplicated("new", options), true);
    assertEquals(await queue.enqueueDeduplicated("again", options), false);
    // And the priority column (0.3), which orders claims.
    await queue.enqueue("urgent", { priority: 2 });
    const order: unknown[] = [];
    const both = deferred();
    const again = new AbortController();
    const second = queue.listen((message) => {
      order.push(message);
      if (order.length === 2) both.resolve();
    }, { signal: again.signal });
    await within(both.promise, "the two new messages");
    again.abort();
    await within(second, "listen() to resolve");
    assertEquals(order, ["urgent", "new"]);
    // And the deliveries column (0.4), which counts hand-outs.
    const columns = await admin.unsafe(
      `SELECT 1 FROM pg_attribute
       WHERE attrelid = '"${tableName}"'::regclass AND attname = 'deliveries'`,
    );
    assertEquals(columns.length, 1);
  } finally {
    await queue.drop();
    await queue[Symbol.asyncDispose]();
    await admin.end({ timeout: 5 });
  }
});

test("PostgresMessageQueue counts hand-outs in the claim, before the handler runs, until a redelivery resets them", async () => {
  const tableName = uniqueTable();
  const queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName,
    leaseTime: { milliseconds: 200 },
  });
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const controller = new AbortController();
    const seen: { message: unknown; count?: number; stored: number }[] = [];
    const done = deferred();
    const listening = queue.listen(async (message: string, redelivery) => {
      const [row] = await admin.unsafe(`SELECT deliveries FROM "${tableName}"`);
      seen.push({ message, count: redelivery?.deliveryCount, stored: Number(row.deliveries) });
      if (message === "v2") return done.resolve();
      if (seen.length < 3) throw new Error("Thrown on purpose.");
      await redelivery!.redeliver("v2", { delay: { milliseconds: 0 } });
    }, { signal: controller.signal });
    await queue.enqueue("v1");
    await within(done.promise, "the redelivered version");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(seen, [
      { message: "v1", count: 1, stored: 1 },
      { message: "v1", count: 2, stored: 2 },
      { message: "v1", count: 3, stored: 3 },
      { message: "v2", count: 1, stored: 1 },
    ]);
  } finally {
    await queue.drop();
    await queue[Symbol.asyncDispose]();
    await admin.end({ timeout: 5 });
  }
});

test("PostgresMessageQueue takes back the count of prefetched messages released unstarted", async () => {
  const tableName = uniqueTable();
  const queue = new PostgresMessageQueue(POSTGRES_URL, {
    tableName,
    leaseTime: { minutes: 10 },
    prefetch: 2,
  });
  const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const controller = new AbortController();
    const started = deferred();
    const release = deferred();
    const listening = queue.listen(async () => {
      started.resolve();
      await release.promise;
      throw new Error("Thrown on purpose.");
    }, { signal: controller.signal });
    await queue.enqueueMany(["running", "prefetched 1", "prefetched 2"]);
    await within(started.promise, "the first handler");
    controller.abort();
    release.resolve();
    await within(listening, "listen() to resolve");
    const rows = await admin.unsafe<{ message: string; deliveries: number }[]>(
      `SELECT message::text AS message, deliveries FROM "${tableName}" ORDER BY id`,
    );
    assertEquals(rows.map(({ message, deliveries }) => ({ message, deliveries })), [
      // Its handler threw while the listener was stopping: released at once,
      // uncounted, like a handler aborted by a shutdown.
      { message: '"running"', deliveries: 0 },
      { message: '"prefetched 1"', deliveries: 0 },
      { message: '"prefetched 2"', deliveries: 0 },
    ]);
  } finally {
    await queue.drop();
    await queue[Symbol.asyncDispose]();
    await admin.end({ timeout: 5 });
  }
});
