// Fedwork without a server: SqliteMessageQueue on a file in the temporary
// directory, InProcessMessageQueue, and a bare in-process loop doing the same
// work as the in-process queue's handlers.
import { InProcessMessageQueue, type MessageQueue, ParallelMessageQueue } from "@fedwork/core";
import { SqliteMessageQueue } from "@fedwork/sqlite";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Driver, Payload } from "../driver.ts";
import type { QueueSource } from "./fedwork.ts";

/** SqliteMessageQueue instances on one file, replaced on every reset. */
export function fedworkSqliteSource(): QueueSource {
  const open: SqliteMessageQueue[] = [];
  let path: string | undefined;
  let producer: SqliteMessageQueue | undefined;
  const closeAll = async () => {
    producer = undefined;
    await Promise.all(open.splice(0).map((q) => q[Symbol.asyncDispose]()));
    if (path != null) {
      const old = path;
      await Promise.all(["", "-wal", "-shm"].map((s) => rm(old + s, { force: true })));
    }
  };
  const make = (concurrency?: number) => {
    path ??= join(tmpdir(), `fedwork-bench-${crypto.randomUUID()}.sqlite`);
    const queue = new SqliteMessageQueue({ path, ...(concurrency == null ? {} : { concurrency }) });
    open.push(queue);
    return queue;
  };
  return {
    async reset() {
      await closeAll();
      path = undefined;
    },
    producer: () => producer ??= make(),
    consumer: (concurrency) => make(concurrency),
    close: closeAll,
  };
}

/**
 * One InProcessMessageQueue per reset; listeners above concurrency 1 wrap
 * it in a ParallelMessageQueue (the in-process queue has no concurrency
 * option of its own).
 */
export function fedworkInProcessSource(): QueueSource {
  let queue = new InProcessMessageQueue();
  return {
    async reset() {
      await queue[Symbol.asyncDispose]();
      queue = new InProcessMessageQueue();
    },
    producer: () => queue,
    consumer: (concurrency): MessageQueue =>
      concurrency === 1 ? queue : new ParallelMessageQueue(queue, concurrency),
    close: () => queue[Symbol.asyncDispose](),
  };
}

/**
 * The floor for an in-process queue: an array read from the head, and
 * `concurrency` async workers that each take the next message, await a
 * handler and take the next, sleeping on a promise when the array is empty.
 */
export function bareLoopDriver(): Driver {
  let items: Payload[] = [];
  let head = 0;
  let waiting: (() => void)[] = [];
  const wake = () => {
    const w = waiting;
    waiting = [];
    for (const resolve of w) resolve();
  };
  return {
    reset() {
      items = [];
      head = 0;
      return Promise.resolve();
    },
    enqueueBulk(payloads) {
      for (const p of payloads) items.push(p);
      wake();
      return Promise.resolve();
    },
    enqueueOne(payload) {
      items.push(payload);
      wake();
      return Promise.resolve();
    },
    work(concurrency, handler) {
      let stopped = false;
      const run = (payload: Payload) => Promise.resolve(handler(payload));
      const loops = Array.from({ length: concurrency }, async () => {
        while (!stopped) {
          if (head < items.length) {
            const payload = items[head];
            items[head++] = undefined as never;
            await run(payload);
          } else {
            await new Promise<void>((resolve) => waiting.push(resolve));
          }
        }
      });
      return Promise.resolve({
        async stop() {
          stopped = true;
          wake();
          await Promise.all(loops);
        },
      });
    },
    close: () => Promise.resolve(),
  };
}
