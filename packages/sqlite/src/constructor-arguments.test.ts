import { assertEquals, assertThrows, deferred, test, within } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import type { SqliteOpenDatabase } from "./constructor-arguments.ts";
import { SqliteKvStore } from "./kv-store.ts";
import { SqliteMessageQueue } from "./message-queue.ts";

/** The runtime's own database, as a Fedify app opens it. */
interface NativeDatabase extends SqliteOpenDatabase {
  close(): void;
}

async function openNative(path: string): Promise<NativeDatabase> {
  if ("Bun" in globalThis) {
    // A variable specifier keeps the other runtimes' type checks out of it.
    const specifier = "bun:sqlite";
    const { Database } = await import(specifier) as {
      Database: new (path: string) => NativeDatabase;
    };
    return new Database(path);
  }
  const { DatabaseSync } = await import("node:sqlite");
  return new DatabaseSync(path);
}

async function withNative(body: (db: NativeDatabase, path: string) => void | Promise<void>) {
  const namespace = `fedwork-sqlite-ctor-test-${crypto.randomUUID()}`;
  const path = databasePath(namespace);
  const db = await openNative(path);
  try {
    await body(db, path);
  } finally {
    db.close();
    await cleanup(namespace);
  }
}

test("new SqliteKvStore(db) works on the file of Fedify's open database and leaves it open", async () => {
  await withNative(async (db) => {
    const store = new SqliteKvStore(db, { tableName: "ctor_kv", initialized: true });
    await store.set(["a"], { value: 1 });
    assertEquals(await store.get(["a"]), { value: 1 });
    await store[Symbol.asyncDispose]();
    // The database handed in is the caller's, still open, and sees the row.
    const statement = db.prepare("SELECT count(*) AS n FROM ctor_kv") as {
      get(): { n: number | bigint };
    };
    assertEquals(Number(statement.get().n), 1);
  });
});

test("new SqliteMessageQueue(db, options) carries a message on that file", async () => {
  await withNative(async (db, path) => {
    const queue = new SqliteMessageQueue(db, {
      tableName: "ctor_queue",
      pollInterval: { milliseconds: 100 },
      initialized: false,
      journalMode: "WAL",
    });
    const controller = new AbortController();
    try {
      const received = deferred<unknown>();
      const listening = queue.listen((message) => received.resolve(message), {
        signal: controller.signal,
      });
      // Another instance on the same file, made Fedwork's way, enqueues.
      await using sender = new SqliteMessageQueue({ path, tableName: "ctor_queue" });
      await sender.enqueue({ hello: "fedify" });
      assertEquals(await within(received.promise, "the message"), { hello: "fedify" });
      controller.abort();
      await within(listening, "the listener to stop");
    } finally {
      controller.abort();
      await queue[Symbol.asyncDispose]();
    }
  });
});

test("The SQLite engines refuse an in-memory database, saying why", async () => {
  const db = await openNative(":memory:");
  try {
    assertThrows(() => new SqliteKvStore(db), TypeError, "not an in-memory database");
    assertThrows(() => new SqliteMessageQueue(db), TypeError, "not an in-memory database");
  } finally {
    db.close();
  }
});

test("The SQLite engines name what their first argument must be", () => {
  for (const value of [undefined, null, "app.sqlite", 1, []]) {
    assertThrows(
      // @ts-expect-error: neither a database nor options.
      () => new SqliteKvStore(value),
      TypeError,
      "new SqliteKvStore() takes an open database of node:sqlite or bun:sqlite",
    );
    assertThrows(
      // @ts-expect-error: neither a database nor options.
      () => new SqliteMessageQueue(value),
      TypeError,
      "new SqliteMessageQueue() takes an open database of node:sqlite or bun:sqlite",
    );
  }
});

test("The SQLite engines explain the options of Fedify's that they do not take", async () => {
  await withNative((db) => {
    const cases: [() => unknown, string, string][] = [
      // @ts-expect-error: Fedify's option.
      [() => new SqliteMessageQueue(db, { maxRetries: 5 }), "maxRetries", "busyTimeout"],
      // @ts-expect-error: Fedify's option.
      [() => new SqliteMessageQueue(db, { retryDelayMs: 10 }), "retryDelayMs", "busyTimeout"],
      // @ts-expect-error: only WAL.
      [() => new SqliteMessageQueue(db, { journalMode: "DELETE" }), "journalMode", "WAL"],
      [
        // @ts-expect-error: initialized only in Fedify's form.
        () => new SqliteKvStore({ path: "kv.sqlite", initialized: true }),
        "initialized",
        "Fedify's form",
      ],
    ];
    for (const [construct, option, advice] of cases) {
      const error = assertThrows(construct, UnknownOptionError, advice);
      assertEquals(error.option, option);
    }
    assertThrows(
      // @ts-expect-error: the path comes from the database.
      () => new SqliteKvStore(db, { path: "other.sqlite" }),
      TypeError,
      "the path option cannot come too",
    );
  });
});
