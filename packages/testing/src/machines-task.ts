// What the machine-id suite and its worker processes agree on.  Internal
// to @fedwork/testing.
import type { KvStore } from "@fedwork/core";

/** A key of the store. */
type KvKey = Parameters<KvStore["get"]>[0];

/** The name of the task the suite's workers run. */
export const MACHINES_TASK_NAME = "machines-test";

/** The key whose presence lets the suite's running tasks finish. */
export const MACHINES_RELEASE_KEY: KvKey = ["fedwork-testing", "machines", "release"];
