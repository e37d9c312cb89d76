// The key–value conformance suite inside the Worker: on MemoryKvStore, and
// on WorkersKvStore and D1KvStore over the Worker's real KV and D1
// bindings (packages/cfworkers runs the suite on those two from Deno,
// Node.js and Bun, each call sent to a Worker).  Each test's namespace is a
// key prefix on Workers KV and a table on D1.  The suite's TTL test writes
// a one-second TTL, below Workers KV's 60-second minimum: it checks the
// store's own expiry.
import { D1KvStore, WorkersKvStore } from "@fedwork/cfworkers";
import { MemoryKvStore } from "@fedwork/core";
import { testKvStore } from "@fedwork/testing";
import { workerEnv } from "../harness/bindings.ts";

testKvStore({
  name: "MemoryKvStore inside workerd",
  createStore: () => new MemoryKvStore(),
});

testKvStore({
  name: "WorkersKvStore inside workerd",
  createStore: (namespace) => new WorkersKvStore(workerEnv().KV, { prefix: `${namespace}/` }),
  async cleanup(namespace) {
    const { KV } = workerEnv();
    let cursor: string | undefined;
    do {
      const page = await KV.list({ prefix: `${namespace}/`, ...(cursor ? { cursor } : {}) });
      for (const key of page.keys) await KV.delete(key.name);
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
  },
});

/** A D1 table name for a test namespace (letters, digits and underscores). */
const tableOf = (namespace: string) => namespace.replace(/\W/g, "_");

testKvStore({
  name: "D1KvStore inside workerd",
  createStore: (namespace) => new D1KvStore(workerEnv().DB, { table: tableOf(namespace) }),
  async cleanup(namespace) {
    await workerEnv().DB.prepare(`DROP TABLE IF EXISTS ${tableOf(namespace)}`).run();
  },
});
