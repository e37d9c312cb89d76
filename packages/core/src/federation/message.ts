import type { BaseMessage } from "../processing/envelope.ts";
import type { InboxMessage } from "../activitypub/inbox/message.ts";
import type { FanoutMessage, OutboxMessage } from "../activitypub/outbox/messages.ts";
import type { TaskMessage } from "../tasks/message.ts";

export type { BaseMessage };

/**
 * Any message Fedwork puts on a queue.  Documented as opaque: the set of
 * variants may grow without a breaking change.
 * @since 0.1.0
 */
export type Message = FanoutMessage | OutboxMessage | InboxMessage | TaskMessage;

/**
 * The `type` discriminator of {@link Message}.
 * @since 0.1.0
 */
export type MessageType = Message["type"];
