import { httpStatusOf } from "../../activitypub/outbox/errors.ts";
import { describeError } from "../../processing/error-description.ts";
import type { OutboxMessage } from "../../activitypub/outbox/messages.ts";
import type { BaseMessage } from "../../processing/envelope.ts";
import type { MessageEvent, MessageFailedEvent } from "../../processing/events.ts";
import type { MessageRunner } from "../../processing/message-runners.ts";
import type { TaskStepsStatus } from "../../tasks/steps/types.ts";
import type { WebhookEventType, WebhookPayload, WebhookTaskInfo } from "./types.ts";

/**
 * Builds the payload of a `completed`, `failed`, `dropped` or (since 0.3.0)
 * `cancelled` event.
 * @param event The lifecycle event of a task message.
 * @param webhookId The webhook it is sent to.
 * @param result The handler's checked result, for `completed` (since
 *               0.3.0).
 * @param runner The worker that ran the task, if one did (since 0.4.0).
 * @param steps The task's durable steps, when its run used them (since
 *              0.4.0).
 * @returns The payload, with a fresh event id.
 * @since 0.2.0
 */
export function webhookPayloadOfEvent(
  event: MessageEvent,
  webhookId: string,
  result?: Pick<WebhookTaskInfo, "result" | "resultOmitted">,
  runner?: MessageRunner,
  steps?: TaskStepsStatus,
): WebhookPayload {
  const task: { -readonly [K in keyof WebhookTaskInfo]: WebhookTaskInfo[K] } = {
    id: event.messageId,
    name: event.taskName ?? event.kind,
    attempt: event.attempt,
    enqueuedAt: event.enqueuedAt.toISOString(),
    durationMs: Math.round(event.duration),
  };
  if (runner != null) {
    task.workerId = runner.workerId;
    task.machineId = runner.machineId;
  }
  if (steps != null) task.steps = steps;
  if (event.type === "completed" && result != null) {
    if (result.result !== undefined) task.result = result.result;
    if (result.resultOmitted != null) task.resultOmitted = result.resultOmitted;
  }
  if (event.type === "failed" && event.reason !== "permanent") {
    // The retry policy was asked and said no more.
    task.attemptsLeft = 0;
  }
  if (event.type === "failed" || event.type === "dropped") {
    task.reason = event.reason;
    if (event.error !== undefined) task.error = describeError(event.error);
  }
  if (event.type === "cancelled") {
    if (event.reason != null) task.reason = event.reason;
    task.started = event.started;
  }
  return {
    id: crypto.randomUUID(),
    type: event.type as WebhookEventType,
    createdAt: new Date().toISOString(),
    webhookId,
    task,
  };
}

/**
 * Builds the payload of a `progress` event.
 * @param message The running task's id, name, attempt and enqueue time.
 * @param progress The reported percent and data.
 * @param webhookId The webhook it is sent to.
 * @param runner The worker running the task, if known (since 0.4.0).
 * @returns The payload, with a fresh event id.
 * @since 0.2.0
 */
export function webhookPayloadOfProgress(
  message: {
    readonly id: string;
    readonly taskName: string;
    readonly attempt: number;
    readonly started: string;
  },
  progress: { readonly percent?: number; readonly data?: unknown },
  webhookId: string,
  runner?: MessageRunner,
): WebhookPayload {
  return {
    id: crypto.randomUUID(),
    type: "progress",
    createdAt: new Date().toISOString(),
    webhookId,
    task: {
      id: message.id,
      name: message.taskName,
      attempt: message.attempt,
      enqueuedAt: message.started,
      ...(runner == null ? {} : { workerId: runner.workerId, machineId: runner.machineId }),
      progress: {
        ...(progress.percent == null ? {} : { percent: progress.percent }),
        ...(progress.data === undefined ? {} : { data: progress.data }),
      },
    },
  };
}

/**
 * Builds the payload of an `enqueued` event.
 * @param message The task message that reached its queue.
 * @param webhookId The webhook it is sent to.
 * @returns The payload, with a fresh event id.
 * @since 0.3.0
 */
export function webhookPayloadOfEnqueued(
  message: { readonly id: string; readonly taskName: string; readonly started: string },
  webhookId: string,
): WebhookPayload {
  return {
    id: crypto.randomUUID(),
    type: "enqueued",
    createdAt: new Date().toISOString(),
    webhookId,
    task: { id: message.id, name: message.taskName, attempt: 0, enqueuedAt: message.started },
  };
}

/** The name failed deliveries have in webhook events and the failed-task store. */
const FAILED_DELIVERY_NAME = "fedwork:delivery";

/**
 * Whether a message is an outgoing delivery with the fields a webhook
 * event reports.
 * @param message A message that failed.
 * @returns `true` for a well-formed outbox message.
 */
export function isOutboxMessage(message: BaseMessage): message is OutboxMessage {
  const delivery = message as Partial<OutboxMessage>;
  return delivery.type === "outbox" && typeof delivery.inbox === "string" &&
    typeof delivery.activityType === "string";
}

/**
 * Builds the payload of the `failed` event of an outgoing delivery that
 * failed for good.
 * @param event The delivery's `failed` event.
 * @param message The outbox message.
 * @param webhookId The webhook it is sent to.
 * @returns The payload, with a fresh event id.
 * @since 0.3.0
 */
export function webhookPayloadOfFailedDelivery(
  event: MessageFailedEvent,
  message: OutboxMessage,
  webhookId: string,
): WebhookPayload {
  const statusCode = httpStatusOf(event.error);
  return {
    id: crypto.randomUUID(),
    type: "failed",
    createdAt: new Date().toISOString(),
    webhookId,
    task: {
      kind: "delivery",
      id: event.messageId,
      name: FAILED_DELIVERY_NAME,
      attempt: event.attempt,
      ...(event.reason === "permanent" ? {} : { attemptsLeft: 0 }),
      enqueuedAt: event.enqueuedAt.toISOString(),
      durationMs: Math.round(event.duration),
      reason: event.reason,
      ...(event.error === undefined ? {} : { error: describeError(event.error) }),
      delivery: {
        inbox: message.inbox,
        sharedInbox: message.sharedInbox === true,
        ...(message.activityId == null ? {} : { activityId: message.activityId }),
        activityType: message.activityType,
        ...(statusCode == null ? {} : { statusCode }),
      },
    },
  };
}
