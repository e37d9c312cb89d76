// defineTask's completedRetention / failedRetention options.  That a
// task's own retention overrides the federation's is tested on every store
// by @fedwork/testing's testTaskRetention()
// (packages/testing/src/retention-suite.ts).
import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../../federation/federation.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { TaskDefinitionError } from "../../tasks/errors.ts";

test("defineTask refuses a retention that is not a duration, naming the option", () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  const schema = z.object({});
  const error = assertThrows(
    () =>
      federation.defineTask("a", {
        schema,
        handler: () => {},
        completedRetention: "forever",
      }),
    TaskDefinitionError,
    "completedRetention",
  );
  assertEquals(error.option, "completedRetention");
  assertThrows(
    () => federation.defineTask("b", { schema, handler: () => {}, failedRetention: { days: -1 } }),
    TaskDefinitionError,
    "failedRetention",
  );
});
