// The federation's side of durable steps: where a step runner keeps its
// records, how a woken task goes back into its queue, how an invoked child
// is enqueued with its derived id and how it ended.  Wiring only: the
// steps themselves are in tasks/steps/.
import type { DocumentLoader } from "@fedify/vocab";
import type { Tracer } from "@opentelemetry/api";
import type { KvStore } from "../kv/kv-store.ts";
import { sendToQueue } from "../processing/producer.ts";
import { handOverMessage } from "../queue/message-ownership.ts";
import type { TaskStatusTracker } from "../operator/status/mod.ts";
import { isTerminalTaskState } from "../operator/status/store.ts";
import type { TaskDefinition } from "../tasks/definition.ts";
import { prepareTaskMessages } from "../tasks/enqueue.ts";
import type { TaskEnqueuer } from "../tasks/enqueuer.ts";
import type { TaskMessage } from "../tasks/message.ts";
import type { TaskStore } from "../tasks/registry.ts";
import { taskQueueOf, type TaskQueueRoutingOptions } from "../tasks/routing.ts";
import {
  ActivityWaitRegistry,
  type ChildEnding,
  rememberStepsStatus,
  type StepRunnerHost,
  stepsStatusOf,
} from "../tasks/steps/mod.ts";

/**
 * What {@link createStepsWiring} needs; the parts built after the task
 * handler are asked for lazily.  Internal.
 * @since 0.4.0
 */
export interface StepsWiringPort<TContextData> {
  readonly kv: KvStore;
  readonly documentLoader: DocumentLoader;
  /** The federation's `taskStatusRetention`, in milliseconds (0: records off). */
  readonly taskStatusRetentionMs: number;
  /** The type ids of the federation's `waitedActivities`. */
  readonly waitedActivityTypeIds: readonly string[];
  readonly tracer: Tracer;
  // deno-lint-ignore no-explicit-any
  readonly tasks: TaskStore<TContextData, any>;
  routing(): TaskQueueRoutingOptions;
  taskEnqueuer(): TaskEnqueuer<TContextData>;
  taskStatus(): TaskStatusTracker;
}

/**
 * Builds the step runners' host and the wake-up of waiting tasks.
 * Internal.
 * @param port The federation's parts.
 * @returns The host, what puts a woken task's message into its queue, and
 *          which activity types waits can need.
 * @since 0.4.0
 */
export function createStepsWiring<TContextData>(
  port: StepsWiringPort<TContextData>,
): {
  readonly host: StepRunnerHost;
  readonly wake: (message: TaskMessage) => Promise<void>;
  readonly activityWaits: ActivityWaitRegistry;
} {
  const activityWaits = new ActivityWaitRegistry(port.kv, port.waitedActivityTypeIds);
  const wake = async (message: TaskMessage): Promise<void> => {
    const task = port.tasks.get(message.taskName);
    if (task == null) {
      throw new TypeError(
        `The task ${JSON.stringify(message.taskName)} is not defined on this federation, so it ` +
          "cannot be woken from here.",
      );
    }
    const queue = taskQueueOf(task, port.routing());
    if (queue == null) {
      throw new TypeError(
        `The task ${JSON.stringify(message.taskName)} has no queue to resume in.`,
      );
    }
    // Not through the producer: a wake-up keeps its trace context and is
    // not a new enqueue to count.
    await sendToQueue(queue, [handOverMessage(message)], {
      ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
      ...(typeof message.priority === "number" && message.priority !== 0
        ? { priority: message.priority }
        : {}),
    });
  };
  const host: StepRunnerHost = {
    kv: port.kv,
    documentLoader: port.documentLoader,
    contextLoader: port.documentLoader,
    // Without status records, a day, as for batches.
    retentionMs: port.taskStatusRetentionMs > 0 ? port.taskStatusRetentionMs : 24 * 60 * 60 * 1000,
    tracer: port.tracer,
    registerActivityWait: (typeId, until) => activityWaits.register(typeId, until),
    async enqueueChild(task, data, childId, parent) {
      const prepared = await prepareTaskMessages({
        registry: port.tasks,
        task: task as TaskDefinition<TContextData, unknown, unknown>,
        payloads: [data],
        queues: port.routing(),
        baseUrl: parent.baseUrl,
      });
      const messages = prepared.messages.map((message) => ({
        ...message,
        id: childId as TaskMessage["id"],
        invokedBy: { id: parent.id },
      }));
      await port.taskEnqueuer().enqueue({ ...prepared, messages });
    },
    async childEnding(id) {
      const status = await port.taskStatus().getTaskStatus(id);
      if (status == null) return undefined;
      if (!isTerminalTaskState(status.state)) return "pending";
      return {
        state: status.state as ChildEnding["state"],
        ...(status.result === undefined ? {} : { result: status.result }),
        ...(status.error?.message == null ? {} : { reason: status.error.message }),
      };
    },
    notice(message, notice) {
      const { status, write } = stepsStatusOf(notice);
      rememberStepsStatus(message, status);
      return port.taskStatus().step(message, status, write);
    },
  };
  return { host, wake, activityWaits };
}
