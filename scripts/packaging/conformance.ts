// Run by scripts/check-packaging.ts in the scratch project as a test file
// (copied as conformance.test.ts): @fedwork/testing's suites, installed from
// its tarball, registering with each runtime's own test runner.  The check
// runs the KV suite and, of the queue suite, the test that SIGKILLs a worker
// process running the published crash-worker.js.  The file also imports
// every other package, so that each one's build is loaded once.
import { MemoryKvStore } from "@fedwork/core";
import { AmqpMessageQueue } from "@fedwork/amqp";
import { PostgresKvStore, PostgresMessageQueue } from "@fedwork/postgres";
import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";
import { testKvStore, testMessageQueue } from "@fedwork/testing";
import { createFederation as createTestFederation } from "@fedwork/testing/app";

const adapters = {
  AmqpMessageQueue,
  PostgresKvStore,
  PostgresMessageQueue,
  RedisKvStore,
  RedisMessageQueue,
  createTestFederation,
};
for (const [name, adapter] of Object.entries(adapters)) {
  if (typeof adapter !== "function") throw new TypeError(`${name} did not load.`);
}

testKvStore({ name: "MemoryKvStore from the tarball", createStore: () => new MemoryKvStore() });

testMessageQueue({
  name: "SqliteMessageQueue from the tarball",
  factoryModule: new URL("./sqlite-factory.ts", import.meta.url).href,
  durable: true,
});
