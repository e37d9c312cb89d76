// Webhooks on the in-memory store; the backends run the same suite on
// SQLite, Redis and PostgreSQL.
import { memoryStoreOptions } from "./memory-stores.ts";
import { testWebhooks } from "./mod.ts";

testWebhooks(memoryStoreOptions());
