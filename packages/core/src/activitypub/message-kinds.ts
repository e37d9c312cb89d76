// The inbox, outbox and fanout message kinds as the dispatcher sees them:
// how each is checked and run, and which retry policy and queue it uses.
// Their outcomes are decided by processing/dispatcher.ts, not here.
import type { MessageKindHandler, MessageRun, UnhandledRun } from "../processing/dispatcher.ts";
import type { BaseMessage } from "../processing/envelope.ts";
import { MalformedMessageError } from "../processing/errors.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import type { InboxMessage } from "./inbox/message.ts";
import type { FanoutMessage, OutboxMessage } from "./outbox/messages.ts";

/**
 * What one of the federation's own message kinds does.
 * @typeParam TContextData The application data of the worker's contexts.
 * @typeParam TMessage The message type.
 */
export interface FederationMessageKind<TContextData, TMessage extends BaseMessage> {
  /** Runs the message; see {@link MessageKindHandler.run}. */
  readonly run: (message: TMessage, run: MessageRun<TContextData>) => Promise<void | UnhandledRun>;
  /** The kind's retry policy. */
  readonly retryPolicy: () => RetryPolicy;
  /** The kind's time limit in milliseconds, or `null` for none. */
  readonly timeout: () => number | null;
  /** The kind's queue, for retries of messages not received from a queue. */
  readonly queue: () => MessageQueue | undefined;
}

/**
 * Builds the dispatcher handler of an inbox, outbox or fanout message kind.
 * @param type The kind.
 * @param kind How it runs and retries.
 * @returns The handler.
 */
export function createFederationMessageHandler<
  TContextData,
  TType extends "inbox" | "outbox" | "fanout",
>(
  type: TType,
  kind: FederationMessageKind<TContextData, MessageOfType<TType>>,
): MessageKindHandler<TContextData, MessageOfType<TType>> {
  return {
    check(message) {
      const reason = CHECKS[type](message as unknown as Record<string, unknown>);
      if (reason != null) throw new MalformedMessageError(`a ${type} message ${reason}`);
      return message as MessageOfType<TType>;
    },
    run: (message, run) => kind.run(message, run),
    retryPolicy: () => kind.retryPolicy(),
    retryQueue: () => kind.queue(),
    timeout: () => kind.timeout(),
  };
}

type MessageOfType<TType> = TType extends "inbox" ? InboxMessage
  : TType extends "outbox" ? OutboxMessage
  : FanoutMessage;

// Each returns why a message lacks the fields of its kind, or undefined.
const CHECKS: Record<
  "inbox" | "outbox" | "fanout",
  (m: Record<string, unknown>) => string | undefined
> = {
  inbox: (m) =>
    m.activity == null || typeof m.activity !== "object"
      ? "has no activity"
      : m.identifier !== null && typeof m.identifier !== "string"
      ? "has an identifier that is neither a string nor null"
      : m.signer !== undefined && (typeof m.signer !== "string" || !URL.canParse(m.signer))
      ? "has a signer that is not a URL"
      : undefined,
  outbox: (m) =>
    typeof m.inbox !== "string" || !URL.canParse(m.inbox)
      ? "has no valid inbox URL"
      : m.activity == null || typeof m.activity !== "object"
      ? "has no activity"
      : m.collectionSync !== undefined && typeof m.collectionSync !== "string"
      ? "has a collectionSync that is not a string"
      : undefined,
  fanout: (m) =>
    m.inboxes == null || typeof m.inboxes !== "object"
      ? "has no inboxes"
      : m.activity == null || typeof m.activity !== "object"
      ? "has no activity"
      : undefined,
};
