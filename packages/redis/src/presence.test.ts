// Worker presence kept on Redis, and the concurrency of RedisMessageQueue.
import { testWorkerPresence } from "@fedwork/testing";
import { RedisKvStore } from "./kv-store.ts";
import { RedisMessageQueue } from "./message-queue.ts";
import { cleanup, deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";

testWorkerPresence({
  name: "RedisKvStore",
  open: (namespace) => new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  close: (kv) => (kv as RedisKvStore)[Symbol.asyncDispose](),
  openQueue: (namespace, { concurrency }) =>
    new RedisMessageQueue({ url: REDIS_URL, queue: namespace, concurrency }),
  async cleanup(namespace) {
    await deleteKeys(`${namespace}:`);
    await cleanup(namespace);
  },
});
