import {
  durationToMilliseconds,
  type MessageQueueHandler,
  type MessageRedelivery,
  type MessageRedeliveryOptions,
} from "@fedwork/core";
import { getLogger } from "@logtape/logtape";

const logger = getLogger(["fedwork", "redis"]);

/** One message handed out by a claim. */
export interface ClaimedMessage {
  readonly id: string;
  readonly json: string;
  /** Which hand-out of the message this is: proves the lease is ours. */
  readonly token: string;
}

/** A message whose handler threw, to be handed out again later. */
export interface HandBack {
  readonly id: string;
  readonly token: string;
}

/** What one claim round trip returns. */
export interface ClaimResult {
  /** Ms until the next delayed message is due or lease runs out; -1: none. */
  readonly waitMs: number;
  /** Ids left in the ready list after taking. */
  readonly readyLeft: number;
  readonly messages: readonly ClaimedMessage[];
}

/** The operations a listener needs from its queue. */
export interface ListenerBackend {
  readonly queue: string;
  readonly concurrency: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  /** How long a handed-back message waits before it is handed out again. */
  readonly redeliveryDelayMs: number;
  /**
   * Acknowledges `ackIds` and hands back `handBacks` (after the redelivery
   * delay), then takes up to `count` messages.
   */
  claim(
    ackIds: readonly string[],
    handBacks: readonly HandBack[],
    count: number,
  ): Promise<ClaimResult>;
  /** Extends the leases of `ids`. */
  heartbeat(ids: readonly string[]): Promise<void>;
  /**
   * Stores `json` as the new version of the running message and schedules
   * it after `delayMs`; rejects when the lease was lost.
   */
  redeliver(message: ClaimedMessage, json: string, delayMs: number): Promise<void>;
  /** Calls `wake` whenever messages may have become ready; returns an unsubscriber. */
  onWake(wake: () => void): () => void;
  /** Whether `error` means the queue can never work again (it was disposed). */
  isFatal(error: unknown): boolean;
  /** Throws the fatal error when the queue can never work again. */
  checkOpen(): void;
}

// Backoff after failed claims: doubles from the first value up to the cap.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
const FINAL_ACK_ATTEMPTS = 5;

/**
 * The {@link MessageRedelivery} handed to one handler call, which
 * remembers whether it stored a new version.
 */
class ListenerRedelivery implements MessageRedelivery {
  readonly #backend: ListenerBackend;
  readonly #message: ClaimedMessage;
  #storing: Promise<void> | undefined;
  #stored = false;

  constructor(backend: ListenerBackend, message: ClaimedMessage) {
    this.#backend = backend;
    this.#message = message;
  }

  redeliver(message: unknown, options: MessageRedeliveryOptions): Promise<void> {
    try {
      if (this.#storing != null) {
        throw new TypeError(
          `redeliver() was already called for this delivery of message ${this.#message.id} ` +
            `of queue ${JSON.stringify(this.#backend.queue)}; call it at most once per delivery.`,
        );
      }
      const delayMs = durationToMilliseconds(options?.delay, "delay");
      const json = JSON.stringify(message);
      if (json === undefined) {
        throw new TypeError(
          `The message to redeliver is not JSON-serializable (got ${typeof message}).`,
        );
      }
      const storing = this.#backend.redeliver(this.#message, json, delayMs).then(() => {
        this.#stored = true;
      });
      this.#storing = storing;
      return storing;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Whether a new version was stored, once a `redeliver()` call settled. */
  async stored(): Promise<boolean> {
    // A handler that did not await its redeliver() call still gets it.
    await this.#storing?.catch(() => {});
    return this.#stored;
  }
}

/**
 * Runs one `listen()` call: claims messages (acknowledging finished ones and
 * handing back failed ones in the same round trip), runs up to
 * `concurrency` handlers, keeps their leases alive and sleeps until woken,
 * a timer for the next delayed message or lease deadline, or the poll
 * interval.
 */
export async function runListener(
  backend: ListenerBackend,
  handler: MessageQueueHandler,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) return;
  const running = new Map<string, Promise<void>>();
  let acks: string[] = [];
  let handBacks: HandBack[] = [];
  let woken = false;
  let wakeUp: (() => void) | undefined;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const sleep = (ms: number) => {
    if (woken || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });
  };
  const unsubscribe = backend.onWake(wake);
  signal?.addEventListener("abort", wake);
  const heartbeat = setInterval(() => {
    if (running.size === 0) return;
    backend.heartbeat([...running.keys()]).catch((error) => {
      logger.warn(
        "Failed to extend the leases of {count} running messages of queue {queue}: " +
          "{error}",
        { count: running.size, queue: backend.queue, error },
      );
    });
  }, backend.heartbeatMs);
  /** Runs the handler; says what to do with the message afterwards. */
  const handle = async (message: ClaimedMessage): Promise<"ack" | "handBack" | "keep"> => {
    let payload: unknown;
    try {
      payload = JSON.parse(message.json);
    } catch (error) {
      // Handing it out again would not make it parse.
      logger.error(
        "Dropping message {messageId} of queue {queue}: it is not valid JSON: {error}",
        { messageId: message.id, queue: backend.queue, error },
      );
      return "ack";
    }
    const redelivery = new ListenerRedelivery(backend, message);
    let failure: { error: unknown } | undefined;
    try {
      await handler(payload, redelivery);
    } catch (error) {
      failure = { error };
    }
    if (await redelivery.stored()) {
      if (failure != null) {
        logger.error(
          "A handler failed on message {messageId} of queue {queue} after redelivering it; " +
            "its new version stays scheduled: {error}",
          { messageId: message.id, queue: backend.queue, error: failure.error },
        );
      }
      return "keep";
    }
    if (failure == null) return "ack";
    // Not handled: the message is kept and handed out again later, never
    // acknowledged, so a failure to enqueue a retry cannot lose it.
    logger.error(
      "A handler failed on message {messageId} of queue {queue}; it will be handed out " +
        "again in {redeliveryDelayMs} ms: {error}",
      {
        messageId: message.id,
        queue: backend.queue,
        redeliveryDelayMs: backend.redeliveryDelayMs,
        error: failure.error,
      },
    );
    return "handBack";
  };
  const start = (message: ClaimedMessage) => {
    const run = (async () => {
      // Yield first so that the entry below is in `running` before the
      // `finally` block removes it, even when the handler throws at once.
      await Promise.resolve();
      let outcome: "ack" | "handBack" | "keep" = "handBack";
      try {
        outcome = await handle(message);
      } finally {
        running.delete(message.id);
        if (outcome === "ack") acks.push(message.id);
        else if (outcome === "handBack") handBacks.push(message);
        wake();
      }
    })();
    running.set(message.id, run);
  };

  let failures = 0;
  try {
    while (!signal?.aborted) {
      backend.checkOpen();
      const capacity = backend.concurrency - running.size;
      if (capacity <= 0 && acks.length === 0 && handBacks.length === 0) {
        woken = false;
        await sleep(Infinity);
        continue;
      }
      woken = false;
      const ackIds = acks;
      const handedBack = handBacks;
      acks = [];
      handBacks = [];
      let result: ClaimResult;
      try {
        result = await backend.claim(ackIds, handedBack, Math.max(capacity, 0));
      } catch (error) {
        // Stopping here leaves running handlers' leases to run out, which
        // is all a disposed instance can do.
        if (backend.isFatal(error)) throw error;
        acks = ackIds.concat(acks);
        handBacks = handedBack.concat(handBacks);
        failures++;
        const retryMs = Math.min(FIRST_RETRY_MS * 2 ** (failures - 1), MAX_RETRY_MS);
        logger.warn(
          "Failed to take messages from queue {queue} ({failures} failures in a row); " +
            "retrying in {retryMs} ms: {error}",
          { queue: backend.queue, failures, retryMs, error },
        );
        await sleep(retryMs);
        continue;
      }
      if (failures > 0) {
        logger.info("Taking messages from queue {queue} works again.", { queue: backend.queue });
        failures = 0;
      }
      for (const message of result.messages) start(message);
      if (result.readyLeft > 0 && running.size < backend.concurrency) continue;
      const waitMs = result.waitMs < 0 ? backend.pollMs : Math.min(result.waitMs, backend.pollMs);
      await sleep(waitMs);
    }
    await Promise.all(running.values());
  } finally {
    clearInterval(heartbeat);
    unsubscribe();
    signal?.removeEventListener("abort", wake);
  }
  await flushAcks(backend, acks, handBacks);
}

async function flushAcks(
  backend: ListenerBackend,
  ids: readonly string[],
  handBacks: readonly HandBack[],
): Promise<void> {
  if (ids.length === 0 && handBacks.length === 0) return;
  for (let attempt = 1;; attempt++) {
    try {
      await backend.claim(ids, handBacks, 0);
      return;
    } catch (error) {
      if (attempt >= FINAL_ACK_ATTEMPTS) {
        // The messages come back after their lease: delivered twice, not lost.
        logger.error(
          "Failed to acknowledge or hand back {count} messages of queue {queue} when " +
            "stopping; they will be delivered again after their lease: {error}",
          { count: ids.length + handBacks.length, queue: backend.queue, error },
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 2 ** attempt));
    }
  }
}
