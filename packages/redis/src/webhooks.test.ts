// Webhooks kept on Redis.
import { testWebhooks } from "@fedwork/testing";
import { RedisKvStore } from "./kv-store.ts";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";

testWebhooks({
  name: "RedisKvStore",
  open: (namespace) => new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  close: (kv) => (kv as RedisKvStore)[Symbol.asyncDispose](),
  cleanup: (namespace) => deleteKeys(`${namespace}:`),
});
