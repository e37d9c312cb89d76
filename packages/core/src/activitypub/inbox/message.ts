// The message that carries a received activity through the inbox queue:
// an interface only.
import type { BaseMessage } from "../../processing/envelope.ts";

/**
 * A received activity waiting for the inbox listeners.  Opaque.
 * @since 0.1.0
 */
export interface InboxMessage extends BaseMessage {
  /** Always `"inbox"`. */
  readonly type: "inbox";
  /** The received activity as JSON-LD. */
  readonly activity: unknown;
  /**
   * The identifier of the actor whose inbox received the activity, or
   * `null` for the shared inbox.
   */
  readonly identifier: string | null;
  /**
   * The actor whose signature the inbox verified (its HTTP signature, or
   * an object proof or LD signature of a forwarded activity); absent when
   * signatures were not verified.  The worker checks that the activity,
   * read as JSON-LD, has this actor.
   * @since 0.3.0
   */
  readonly signer?: string;
}
