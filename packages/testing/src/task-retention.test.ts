// Per-task retention on the in-memory store; the backends run the same
// suite on SQLite, Redis and PostgreSQL.
import { memoryStoreOptions } from "./memory-stores.ts";
import { testTaskRetention } from "./mod.ts";

testTaskRetention(memoryStoreOptions());
