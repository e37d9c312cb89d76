// Which worker of this process runs each message, for what reports a run
// (task status records, webhook payloads): set by the workers as they hand
// a message to the dispatcher, read by the observers while it runs.

/**
 * The worker and machine that run a message.
 * @since 0.4.0
 */
export interface MessageRunner {
  /** The worker's id (`WorkerInfo.id`). */
  readonly workerId: string;
  /** Its machine's id (`WorkerInfo.machineId`). */
  readonly machineId: string;
}

/**
 * The runner of each message this process runs now, by message id.
 * Internal.
 * @since 0.4.0
 */
export class MessageRunners {
  readonly #runners = new Map<string, MessageRunner>();

  /**
   * Records that a worker started running a message.
   * @param messageId The message's id; `""` (not Fedwork's) is ignored.
   * @param runner The worker.
   */
  begin(messageId: string, runner: MessageRunner): void {
    if (messageId !== "") this.#runners.set(messageId, runner);
  }

  /**
   * Forgets a run that ended, unless another worker of this process took
   * the message meanwhile (a redelivery while it still ran).
   * @param messageId The message's id.
   * @param runner The worker that ran it.
   */
  end(messageId: string, runner: MessageRunner): void {
    if (this.#runners.get(messageId) === runner) this.#runners.delete(messageId);
  }

  /**
   * The worker running a message here, if any.
   * @param messageId The message's id.
   * @returns The worker, or `undefined` when none of this process's runs it.
   */
  of(messageId: string): MessageRunner | undefined {
    // Most processes run few messages at once; an empty map needs no hash.
    return this.#runners.size === 0 ? undefined : this.#runners.get(messageId);
  }
}
