// Worker presence on the in-memory store; the backends run the same suite
// on SQLite, Redis and PostgreSQL, with their own queues.
import { memoryStoreOptions } from "./memory-stores.ts";
import { testWorkerPresence } from "./mod.ts";

testWorkerPresence(memoryStoreOptions());
