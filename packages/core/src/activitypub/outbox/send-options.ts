// What a sender and `sendActivity()`'s options are: interfaces only, so
// that the contexts that send (federation/) and the code that builds the
// deliveries can share them without depending on each other.

/**
 * Who sends an activity: the identifier of one of your actors.
 * @since 0.1.0
 */
export interface SenderIdentity {
  /** The actor's identifier, as in the actor dispatcher's path. */
  readonly identifier: string;
}

/**
 * Options for `Context.sendActivity()`.
 * @since 0.1.0
 */
export interface SendActivityOptions {
  /**
   * Deliver to a recipient's shared inbox instead of its personal inbox
   * when it has one, so that one request reaches every recipient on a
   * server.  `false` by default.
   */
  readonly preferSharedInbox?: boolean;

  /**
   * Whether to enqueue one fan-out message that a worker expands into
   * deliveries (`"force"`), one delivery message per inbox (`"skip"`), or
   * the former only above five inboxes (`"auto"`, the
   * default).  Fan-out needs a fanout queue; without one it is skipped.
   */
  readonly fanout?: "auto" | "skip" | "force";

  /**
   * Deliveries sharing an ordering key are delivered one at a time, in
   * order (e.g. the activity's object ID, so a `Delete` never overtakes its
   * `Create`).
   */
  readonly orderingKey?: string;
}

/**
 * Options for `Context.sendActivity()` to `"followers"`, Fedify's type of
 * the same name.
 * @since 0.4.0
 */
export interface SendActivityOptionsForCollection extends SendActivityOptions {
  /**
   * Whether each delivery carries FEP-8fcf's `Collection-Synchronization`
   * header: the sender's followers collection and the digest of the
   * followers that delivery reaches, so that the receiving server can
   * notice follows it and the sender disagree about (Mastodon does).  Only
   * for the recipients `"followers"`; ignored otherwise, as in Fedify.
   * @default `false`
   */
  readonly syncCollection?: boolean;
}
