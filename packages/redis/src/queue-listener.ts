import { getLogger } from "@logtape/logtape";

const logger = getLogger(["fedwork", "redis"]);

/** One message handed out by a claim. */
export interface ClaimedMessage {
  readonly id: string;
  readonly json: string;
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
  /** Acknowledges `ackIds`, then takes up to `count` messages. */
  claim(ackIds: readonly string[], count: number): Promise<ClaimResult>;
  /** Extends the leases of `ids`. */
  heartbeat(ids: readonly string[]): Promise<void>;
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
 * Runs one `listen()` call: claims messages (acknowledging finished ones in
 * the same round trip), runs up to `concurrency` handlers, keeps their
 * leases alive and sleeps until woken, a timer for the next delayed
 * message or lease deadline, or the poll interval.
 */
export async function runListener(
  backend: ListenerBackend,
  // deno-lint-ignore no-explicit-any
  handler: (message: any) => Promise<void> | void,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) return;
  const running = new Map<string, Promise<void>>();
  let acks: string[] = [];
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
  const start = (message: ClaimedMessage) => {
    const run = (async () => {
      // Yield first so that the entry below is in `running` before the
      // `finally` block removes it, even when the handler throws at once.
      await Promise.resolve();
      try {
        await handler(JSON.parse(message.json));
      } catch (error) {
        // A failing message is acknowledged like any other: retrying is the
        // caller's business (nativeRetrial is false).
        logger.error("A handler failed on message {messageId} of queue {queue}: {error}", {
          messageId: message.id,
          queue: backend.queue,
          error,
        });
      } finally {
        running.delete(message.id);
        acks.push(message.id);
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
      if (capacity <= 0 && acks.length === 0) {
        woken = false;
        await sleep(Infinity);
        continue;
      }
      woken = false;
      const ackIds = acks;
      acks = [];
      let result: ClaimResult;
      try {
        result = await backend.claim(ackIds, Math.max(capacity, 0));
      } catch (error) {
        // Stopping here leaves running handlers' leases to run out, which
        // is all a disposed instance can do.
        if (backend.isFatal(error)) throw error;
        acks = ackIds.concat(acks);
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
  await flushAcks(backend, acks);
}

async function flushAcks(backend: ListenerBackend, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  for (let attempt = 1;; attempt++) {
    try {
      await backend.claim(ids, 0);
      return;
    } catch (error) {
      if (attempt >= FINAL_ACK_ATTEMPTS) {
        // The messages come back after their lease: delivered twice, not lost.
        logger.error(
          "Failed to acknowledge {count} messages of queue {queue} when stopping; they will " +
            "be delivered again after their lease: {error}",
          { count: ids.length, queue: backend.queue, error },
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 2 ** attempt));
    }
  }
}
