// The conformance factory for DenoKvMessageQueue.  A namespace maps to a
// Deno KV database file whose path depends only on the namespace, so that
// the crash test's child process, which imports this module on its own,
// opens the same file.  On Deno the database is Deno.openKv(); on Node.js
// and Bun it is the @deno/kv npm package, which runs the same SQLite-backed
// Deno KV engine, so the suites run on all three runtimes.
import process from "node:process";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageQueue } from "@fedwork/core";
import type { DenoKv } from "../deno-kv.ts";
import { DenoKvMessageQueue } from "../message-queue.ts";
import { DenoKvStore } from "../kv-store.ts";

/** An open database and how to close it. */
export interface OpenedKv {
  readonly kv: DenoKv;
  close(): void;
}

/** The Deno KV database file of a test namespace. */
export function databasePath(namespace: string): string {
  return join(process.env.DENOKV_PATH || tmpdir(), `${namespace}.denokv`);
}

// The module name is a variable so that Deno's type check leaves it alone.
const nodeKvModule = "@deno/kv";

/** Opens the Deno KV database file at `path` on any of the three runtimes. */
export async function openKvFile(path: string): Promise<OpenedKv> {
  const deno = (globalThis as unknown as {
    Deno?: { openKv(path: string): Promise<DenoKv & { close(): void }> };
  }).Deno;
  if (deno != null) {
    const kv = await deno.openKv(path);
    return closeOnce(kv);
  }
  const { openKv } = await import(nodeKvModule) as {
    openKv(path: string, options?: object): Promise<DenoKv & { close(): void }>;
  };
  // Bun's structured serialization is not V8's, which @deno/kv expects by
  // default; every value the engine writes is JSON-compatible, so JSON
  // serves on every runtime that does not share the file with Deno.
  const kv = await openKv(
    path,
    "Bun" in globalThis
      ? {
        encodeV8: (value: unknown) => new TextEncoder().encode(JSON.stringify(value)),
        decodeV8: (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)),
      }
      : {},
  );
  return closeOnce(kv);
}

function closeOnce(kv: DenoKv & { close(): void }): OpenedKv {
  let open = true;
  return {
    kv,
    close: () => {
      if (open) kv.close();
      open = false;
    },
  };
}

/** A queue that closes its own database when disposed of. */
class TestQueue extends DenoKvMessageQueue {
  readonly #opened: OpenedKv;

  constructor(
    opened: OpenedKv,
    options: { leaseMs: number; prefetch?: number; concurrency?: number },
  ) {
    super({
      kv: opened.kv,
      ...(options.concurrency == null ? {} : { concurrency: options.concurrency }),
      leaseTime: { milliseconds: options.leaseMs },
      // Instances in one test may run in different processes (the crash
      // test), which poll.
      pollInterval: { milliseconds: 100 },
      prefetch: options.prefetch ?? 4,
    });
    this.#opened = opened;
  }

  override async [Symbol.asyncDispose](): Promise<void> {
    await super[Symbol.asyncDispose]();
    this.#opened.close();
  }
}

/** A new queue instance, with its own database handle, on the namespace's file. */
export async function createQueue(
  namespace: string,
  options: { leaseMs: number; prefetch?: number; concurrency?: number },
): Promise<MessageQueue> {
  return new TestQueue(await openKvFile(databasePath(namespace)), options);
}

/** A store that closes its own database when disposed of. */
class TestStore extends DenoKvStore {
  readonly #opened: OpenedKv;

  constructor(opened: OpenedKv) {
    super({ kv: opened.kv });
    this.#opened = opened;
  }

  override async [Symbol.asyncDispose](): Promise<void> {
    await super[Symbol.asyncDispose]();
    this.#opened.close();
  }
}

/** A new store on the namespace's file. */
export async function createStore(namespace: string): Promise<DenoKvStore> {
  return new TestStore(await openKvFile(databasePath(namespace)));
}

/** Removes the namespace's database file and SQLite's side files. */
export async function cleanup(namespace: string): Promise<void> {
  const path = databasePath(namespace);
  await Promise.all(
    ["", "-wal", "-shm", "-journal"].map((suffix) => rm(path + suffix, { force: true })),
  );
}
