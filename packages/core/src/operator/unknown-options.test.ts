// The operator methods that take options refuse names they do not know,
// as every other entry point does.
import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { createFederation } from "../federation/federation.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import type { GetThroughputOptions } from "../processing/throughput.ts";
import type { ListTaskRecordsOptions } from "./records/record-store.ts";
import type { CountFailedTasksOptions } from "./records/mod.ts";
import type { WatchTaskOptions } from "./status/mod.ts";

function setUp() {
  return createFederation<void>({ kv: new MemoryKvStore(), manuallyStartQueue: true });
}

test("listFailedTasks() and listCompletedTasks() refuse an unknown option, suggesting the nearest name", async () => {
  const federation = setUp();
  const error = await assertRejects(
    () => federation.listFailedTasks({ limt: 5 } as ListTaskRecordsOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "limt");
  assertEquals(
    error.message,
    "Unknown option limt of listFailedTasks(); did you mean limit? " +
      "The options are cursor, kind, limit, taskName.",
  );
  await assertRejects(
    () => federation.listCompletedTasks({ task: "x" } as ListTaskRecordsOptions),
    UnknownOptionError,
    "Unknown option task of listCompletedTasks()",
  );
  // The limit is checked with the shared wording.
  await assertRejects(
    () => federation.listFailedTasks({ limit: 1001 }),
    RangeError,
    "The limit option must be an integer from 1 to 1000; got 1001.",
  );
});

test("countFailedTasks(), getThroughput() and watchTasks() refuse an unknown option", async () => {
  const federation = setUp();
  assertThrows(
    () => federation.countFailedTasks({ knd: "task" } as CountFailedTasksOptions),
    UnknownOptionError,
    "Unknown option knd of countFailedTasks(); did you mean kind?",
  );
  await assertRejects(
    () => federation.getThroughput({ minute: 5 } as GetThroughputOptions),
    UnknownOptionError,
    "Unknown option minute of getThroughput(); did you mean minutes?",
  );
  assertThrows(
    () => federation.watchTasks({ signl: AbortSignal.abort() } as WatchTaskOptions),
    UnknownOptionError,
    "Unknown option signl of watchTasks(); did you mean signal?",
  );
  assertThrows(
    () => federation.watchTask("some-id", { timeout: 5 } as WatchTaskOptions),
    UnknownOptionError,
    "Unknown option timeout of watchTask()",
  );
});
