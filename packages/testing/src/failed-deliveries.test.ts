// Failed deliveries and dead hosts on the in-memory store; the backends run
// the same suite on SQLite, Redis and PostgreSQL.
import { MemoryKvStore } from "@fedwork/core";
import { testFailedDeliveries } from "./mod.ts";

testFailedDeliveries({ name: "MemoryKvStore", open: () => new MemoryKvStore() });
