import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  deferred,
  test,
  within,
} from "@fedify/fixture";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { openSqliteDatabase } from "./driver.ts";
import { SqliteClosedError } from "./errors.ts";
import { SqliteIdentifierError } from "./errors.ts";
import { SqliteMessageQueue } from "./message-queue.ts";

/** Runs `body` with a fresh database file, removed afterwards. */
async function withDatabase(body: (path: string) => Promise<void>): Promise<void> {
  const namespace = `fedwork-sqlite-test-${crypto.randomUUID()}`;
  try {
    await body(databasePath(namespace));
  } finally {
    await cleanup(namespace);
  }
}

test("SqliteMessageQueue rejects invalid options naming the option", () => {
  const path = databasePath("never-opened");
  // @ts-expect-error: path is required.
  assertThrows(() => new SqliteMessageQueue({}), TypeError, "path");
  assertThrows(() => new SqliteMessageQueue({ path: ":memory:" }), TypeError, "path");
  assertThrows(
    () => new SqliteMessageQueue({ path, tableName: "messages; DROP TABLE x" }),
    SqliteIdentifierError,
    "tableName",
  );
  assertThrows(
    () => new SqliteMessageQueue({ path, leaseTime: { seconds: 0 } }),
    RangeError,
    "The leaseTime option must be a positive duration",
  );
  assertThrows(
    () => new SqliteMessageQueue({ path, pollInterval: { seconds: -1 } }),
    RangeError,
    "pollInterval",
  );
  assertThrows(() => new SqliteMessageQueue({ path, concurrency: 0 }), RangeError, "concurrency");
  assertThrows(() => new SqliteMessageQueue({ path, concurrency: 1.5 }), RangeError, "concurrency");
  assertThrows(
    () => new SqliteMessageQueue({ path, prefetch: -1 }),
    RangeError,
    "The prefetch option must be a non-negative integer; got -1.",
  );
  assertThrows(
    () => new SqliteMessageQueue({ path, prefetch: 32, maxPrefetch: 8 }),
    RangeError,
    "The maxPrefetch option (8) must be at least the prefetch option (32)",
  );
});

test("SqliteMessageQueue deletes the handled messages when it is closed", async () => {
  await withDatabase(async (path) => {
    const queue = new SqliteMessageQueue({ path, concurrency: 2 });
    const handled = deferred();
    let count = 0;
    const listening = queue.listen(() => {
      if (++count === 2) handled.resolve();
    });
    await queue.enqueueMany(["a", "b"]);
    await within(handled.promise, "both messages");
    // Closing (no abort) stops the listener, which must still acknowledge.
    await queue[Symbol.asyncDispose]();
    await within(listening, "listen() to resolve");
    await using check = new SqliteMessageQueue({ path });
    assertEquals((await check.getDepth()).queued, 0);
  });
});

test("SqliteMessageQueue rejects enqueue and listen after it was closed", async () => {
  await withDatabase(async (path) => {
    const queue = new SqliteMessageQueue({ path });
    await queue.enqueue({ before: "close" });
    await queue[Symbol.asyncDispose]();
    const error = await assertRejects(() => queue.enqueue({ after: "close" }), SqliteClosedError);
    assertInstanceOf(error, SqliteClosedError);
    await assertRejects(() => queue.listen(() => {}), SqliteClosedError);
    // The message enqueued before closing is still in the file.
    await using reopened = new SqliteMessageQueue({ path });
    assertEquals(await reopened.getDepth(), { queued: 1, ready: 1, delayed: 0 });
  });
});

test("SqliteMessageQueue closing stops its listeners after their handlers finish", async () => {
  await withDatabase(async (path) => {
    const queue = new SqliteMessageQueue({ path });
    const started = deferred();
    const release = deferred();
    let finished = false;
    const listening = queue.listen(async () => {
      started.resolve();
      await release.promise;
      finished = true;
    });
    await queue.enqueue("work");
    await within(started.promise, "the handler to start");
    const closing = queue[Symbol.asyncDispose]();
    release.resolve();
    await within(closing, "the queue to close");
    assert(finished, "The queue closed before the running handler finished.");
    await within(listening, "listen() to resolve");
  });
});

test("SqliteMessageQueue runs up to concurrency handlers at once", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path, concurrency: 4 });
    const controller = new AbortController();
    const release = deferred();
    const allStarted = deferred();
    let running = 0;
    let maxRunning = 0;
    let handled = 0;
    const allHandled = deferred();
    const listening = queue.listen(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      if (running === 4) allStarted.resolve();
      await release.promise;
      running--;
      if (++handled === 6) allHandled.resolve();
    }, { signal: controller.signal });
    await queue.enqueueMany([1, 2, 3, 4, 5, 6]);
    await within(allStarted.promise, "four handlers to run at once");
    release.resolve();
    await within(allHandled.promise, "all six messages");
    controller.abort();
    await listening;
    assertEquals(maxRunning, 4);
  });
});

test("SqliteMessageQueue holds back a key behind an earlier delayed message", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path });
    const controller = new AbortController();
    const order: string[] = [];
    const done = deferred();
    const listening = queue.listen((message: string) => {
      order.push(message);
      if (order.length === 3) done.resolve();
    }, { signal: controller.signal });
    await queue.enqueue("delayed", { orderingKey: "k", delay: { milliseconds: 500 } });
    await queue.enqueue("after", { orderingKey: "k" });
    await queue.enqueue("other key", { orderingKey: "other" });
    await within(done.promise, "three messages");
    controller.abort();
    await listening;
    assertEquals(order, ["other key", "delayed", "after"]);
  });
});

test("SqliteMessageQueue picks up a message enqueued by another process", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path, pollInterval: { milliseconds: 200 } });
    // Create the table first, so the child only inserts.
    await queue.getDepth();
    const controller = new AbortController();
    const received = deferred<unknown>();
    const listening = queue.listen((message) => received.resolve(message), {
      signal: controller.signal,
    });
    await runChild([
      fileURLToPath(new URL("./testdata/enqueue-from-process.ts", import.meta.url)),
      path,
      JSON.stringify({ from: "child" }),
    ]);
    assertEquals(await within(received.promise, "the child's message"), { from: "child" });
    controller.abort();
    await listening;
  });
});

test("SqliteMessageQueue hands each message to exactly one of several processes", async () => {
  await withDatabase(async (path) => {
    await using producer = new SqliteMessageQueue({ path });
    await producer.getDepth(); // Create the table before the children race to.
    const script = fileURLToPath(new URL("./testdata/listen-from-process.ts", import.meta.url));
    const children = [startChild([script, path]), startChild([script, path])];
    try {
      await within(Promise.all(children.map((c) => c.ready)), "the children to listen");
      const count = 200;
      await producer.enqueueMany(Array.from({ length: count }, (_, index) => ({ index })));
      // Deleted rows are acknowledged ones, and a row is claimed before it
      // is deleted: once the table is empty, no claim can follow.
      await within(
        (async () => {
          while ((await producer.getDepth()).queued > 0) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })(),
        "the children to drain the queue",
      );
    } finally {
      for (const child of children) child.stop();
    }
    const lines = (await within(Promise.all(children.map((c) => c.exited)), "the exits"))
      .flat();
    const indexes = lines.map((line) => (JSON.parse(line) as { index: number }).index);
    assertEquals(indexes.length, 200, "Some message was handled twice or not at all.");
    assertEquals(new Set(indexes).size, 200);
  });
});

/** Starts a long-running child that prints READY and then HANDLED lines. */
function startChild(args: string[]): {
  ready: Promise<void>;
  exited: Promise<string[]>;
  stop(): void;
} {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno == null ? process.execPath : deno.execPath();
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(command, deno == null ? args : ["run", "-A", ...args], {
    cwd: process.cwd(),
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const ready = deferred();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (stdout.includes("READY\n")) ready.resolve();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<string[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`A listening child exited with ${code}:\n${stderr}`));
      const prefix = "HANDLED ";
      resolve(stdout.split("\n").filter((l) => l.startsWith(prefix)).map((l) => l.slice(8)));
    });
  });
  // Surface an early exit instead of waiting for READY until the timeout.
  exited.catch(() => {});
  return {
    ready: Promise.race([ready.promise, exited.then(() => {})]),
    exited,
    stop: () => child.stdin.end(),
  };
}

test("SqliteMessageQueue keeps listening after a claim fails on a locked database", async () => {
  await withDatabase(async (path) => {
    const records: LogRecord[] = [];
    const failureLogged = deferred();
    await configure({
      sinks: {
        buffer: (record: LogRecord) => {
          records.push(record);
          if (record.level === "error") failureLogged.resolve();
        },
      },
      loggers: [
        { category: ["fedwork", "sqlite"], sinks: ["buffer"], lowestLevel: "debug" },
        { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
      ],
      reset: true,
    });
    try {
      await using queue = new SqliteMessageQueue({
        path,
        busyTimeout: { milliseconds: 20 },
        pollInterval: { milliseconds: 50 },
      });
      await queue.getDepth(); // Opens the connection and creates the table.
      // Another connection holds SQLite's write lock, so every claim fails
      // with SQLITE_BUSY until it lets go.
      const holder = await openSqliteDatabase(path);
      holder.exec("PRAGMA busy_timeout = 5000");
      holder.exec("BEGIN IMMEDIATE");
      const controller = new AbortController();
      const received = deferred<unknown>();
      let listening: Promise<void>;
      try {
        listening = queue.listen((message) => received.resolve(message), {
          signal: controller.signal,
        });
        await within(failureLogged.promise, "the failed claim to be logged");
      } finally {
        holder.exec("COMMIT");
        holder.close();
      }
      await queue.enqueue({ after: "lock" });
      assertEquals(await within(received.promise, "the message"), { after: "lock" });
      controller.abort();
      await listening;
      assert(records.some((record) => record.level === "error"));
    } finally {
      await reset();
    }
  });
});

/** Runs a TypeScript file on the runtime running this test and waits for it. */
async function runChild(args: string[]): Promise<void> {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  const command = deno == null ? process.execPath : deno.execPath();
  const fullArgs = deno == null ? args : ["run", "-A", ...args];
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(command, fullArgs, { cwd: process.cwd(), env, stdio: "pipe" });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await within(
    new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", resolve);
    }),
    "the child process to exit",
  );
  if (code !== 0) throw new Error(`The child process exited with ${code}:\n${stderr}`);
}

test("SqliteMessageQueue keeps a failed message for one lease and logs its id", async () => {
  await withDatabase(async (path) => {
    const records: LogRecord[] = [];
    await configure({
      sinks: { buffer: (record: LogRecord) => records.push(record) },
      loggers: [
        { category: ["fedwork", "sqlite"], sinks: ["buffer"], lowestLevel: "debug" },
        { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
      ],
      reset: true,
    });
    try {
      // A lease far longer than the test: the message must stay put.
      await using queue = new SqliteMessageQueue({ path, leaseTime: { minutes: 10 } });
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
      assertEquals(typeof failure.properties.messageId, "number");
    } finally {
      await reset();
    }
  });
});

test("SqliteMessageQueue redeliver() leaves a message whose lease another worker took", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path });
    const other = await openSqliteDatabase(path);
    try {
      const controller = new AbortController();
      const rejection = deferred<unknown>();
      const listening = queue.listen(async (_message, redelivery) => {
        // As if this worker's lease had run out and another had claimed it.
        other.exec("UPDATE fedwork_messages SET lease_owner = 'another worker'");
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
      const rows = other.prepare("SELECT message, lease_owner FROM fedwork_messages").all();
      assertEquals(rows.map((row) => ({ ...row })), [
        { message: '"original"', lease_owner: "another worker" },
      ]);
    } finally {
      other.close();
    }
  });
});

test("SqliteMessageQueue hands out a redelivered message while its first handler runs", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path, concurrency: 2 });
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
  });
});

test("SqliteMessageQueue adds the deduplication, priority and deliveries columns to a table made before them", async () => {
  await withDatabase(async (path) => {
    const old = await openSqliteDatabase(path);
    // The table as Fedwork 0.1 created it, with a message in it.
    old.exec(`CREATE TABLE fedwork_messages (
      id INTEGER PRIMARY KEY,
      message TEXT NOT NULL,
      ordering_key TEXT,
      ready_at INTEGER NOT NULL,
      lease_until INTEGER,
      lease_owner TEXT
    );
    INSERT INTO fedwork_messages (message, ready_at) VALUES ('"old"', 0);`);
    old.close();
    await using queue = new SqliteMessageQueue({ path });
    const options = { deduplicationKey: "k", deduplicationTtl: { minutes: 1 } };
    assertEquals(await queue.enqueueDeduplicated("new", options), true);
    assertEquals(await queue.enqueueDeduplicated("again", options), false);
    assertEquals((await queue.getDepth()).queued, 2);
    // The priority column (0.3): the old row has priority 0, and a message
    // of higher priority goes before it.
    await queue.enqueue("urgent", { priority: 2 });
    const order: unknown[] = [];
    const all = deferred();
    const controller = new AbortController();
    const listening = queue.listen((message) => {
      order.push(message);
      if (order.length === 3) all.resolve();
    }, { signal: controller.signal });
    await within(all.promise, "the three messages");
    controller.abort();
    await within(listening, "listen() to resolve");
    assertEquals(order, ["urgent", "old", "new"]);
    // The deliveries column (0.4): every row handed out once.
    const check = await openSqliteDatabase(path);
    try {
      const columns = check.prepare(
        "SELECT name FROM pragma_table_info('fedwork_messages') WHERE name = 'deliveries'",
      ).all();
      assertEquals(columns.length, 1);
    } finally {
      check.close();
    }
  });
});

test("SqliteMessageQueue counts hand-outs in the claim, before the handler runs, until a redelivery resets them", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path, leaseTime: { milliseconds: 200 } });
    const other = await openSqliteDatabase(path);
    try {
      const controller = new AbortController();
      const seen: { message: unknown; count?: number; stored: number }[] = [];
      const done = deferred();
      const listening = queue.listen(async (message: string, redelivery) => {
        const row = other.prepare("SELECT deliveries FROM fedwork_messages").get()!;
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
      other.close();
    }
  });
});

test("SqliteMessageQueue takes back the count of prefetched messages released unstarted", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({
      path,
      leaseTime: { minutes: 10 },
      prefetch: 2,
      concurrency: 1,
    });
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
    const check = await openSqliteDatabase(path);
    try {
      const rows = check.prepare("SELECT message, deliveries FROM fedwork_messages ORDER BY id")
        .all();
      assertEquals(rows.map((row) => ({ ...row })), [
        // Its handler threw while the listener was stopping: released at once,
        // uncounted, like a handler aborted by a shutdown.
        { message: '"running"', deliveries: 0 },
        { message: '"prefetched 1"', deliveries: 0 },
        { message: '"prefetched 2"', deliveries: 0 },
      ]);
    } finally {
      check.close();
    }
  });
});
