// Failed deliveries and dead hosts with the records on Redis.
import { testFailedDeliveries } from "@fedwork/testing";
import { RedisKvStore } from "./kv-store.ts";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";

testFailedDeliveries({
  name: "RedisKvStore",
  open: (namespace) => new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  close: (kv) => (kv as RedisKvStore)[Symbol.asyncDispose](),
  cleanup: (namespace) => deleteKeys(`${namespace}:`),
});
