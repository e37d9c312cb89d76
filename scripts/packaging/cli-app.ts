// The app module scripts/check-packaging.ts gives the packed `fedwork`
// program (`--app ./cli-app.ts`), on Node.js, Deno and Bun: a federation on
// an in-process queue, exported as a user would export theirs.
import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";

/** The federation the CLI operates. */
export const federation = createFederation<void>({
  kv: new MemoryKvStore(),
  queue: new InProcessMessageQueue(),
});
