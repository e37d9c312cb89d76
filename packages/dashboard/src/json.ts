/**
 * `@fedwork/dashboard/json`: the JSON shapes of the dashboard's API, and the
 * functions that make them from what the operator API returns (queue
 * depths, workers, unhealthy hosts, failed and completed task records, task
 * updates), for tools that print or forward the same fields: the `fedwork`
 * CLI's `--json` output is made with them.
 *
 * ```ts
 * import { serializeQueueDepth } from "@fedwork/dashboard/json";
 * import type { QueueDepthEntry } from "@fedwork/core";
 *
 * const entries: QueueDepthEntry[] = [];
 * console.log(JSON.stringify(entries.map(serializeQueueDepth)));
 * ```
 * @module
 * @since 0.4.0
 */
export {
  type FailedTaskJson,
  type HostHealthJson,
  type QueueDepthJson,
  serializeFailedTask,
  serializeHostHealth,
  serializeQueueDepth,
  serializeTaskRecord,
  serializeTaskUpdate,
  serializeWorker,
  type TaskRecordJson,
  type TaskUpdateJson,
  type WorkerJson,
} from "./serialize.ts";
export { toDisplayText } from "./display.ts";
