// Per-task retention of the task records on Redis.
import { testTaskRetention } from "@fedwork/testing";
import { RedisKvStore } from "./kv-store.ts";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";

testTaskRetention({
  name: "RedisKvStore",
  open: (namespace) => new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  close: (kv) => (kv as RedisKvStore)[Symbol.asyncDispose](),
  cleanup: (namespace) => deleteKeys(`${namespace}:`),
});
