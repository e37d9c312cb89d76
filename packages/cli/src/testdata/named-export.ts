// An app module exporting the federation itself, as `federation`, on an
// in-memory store: the CLI must find it there.
import { createFederation } from "@fedwork/core";
import { MemoryKvStore } from "@fedwork/core";

/** The federation. */
export const federation = createFederation<void>({ kv: new MemoryKvStore() });
