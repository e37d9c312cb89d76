import { getLogger } from "@logtape/logtape";
import type { HostHealthStore } from "./store.ts";
import type { MessageProducer } from "../../processing/producer.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import type { OutboxMessage } from "./api.ts";

const logger = getLogger(["fedwork", "federation", "host-health"]);

/** How many parked deliveries are enqueued again at once. */
const RELEASE_BATCH = 64;

/**
 * Puts a host's parked deliveries back into the outbox queue: all of them
 * (the host recovered, or died and they are to fail there), or those past
 * the parked retention, marked to fail for good.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.3.0
 */
export class ParkedDeliveries<TContextData> {
  readonly #store: HostHealthStore;
  readonly #producer: MessageProducer<TContextData>;
  readonly #outbox: MessageQueue;
  readonly #retentionMs: number;

  /**
   * @param store The health records and parked deliveries.
   * @param producer Puts released deliveries into the outbox queue.
   * @param outbox The outbox queue.
   * @param retentionMs How long a delivery stays parked at most.
   */
  constructor(
    store: HostHealthStore,
    producer: MessageProducer<TContextData>,
    outbox: MessageQueue,
    retentionMs: number,
  ) {
    this.#store = store;
    this.#producer = producer;
    this.#outbox = outbox;
    this.#retentionMs = retentionMs;
  }

  /**
   * Releases every parked delivery of a host.
   * @param host The host.
   */
  async releaseAll(host: string): Promise<void> {
    const parked = await this.#store.parked(host);
    for (let i = 0; i < parked.length; i += RELEASE_BATCH) {
      await this.release(host, parked.slice(i, i + RELEASE_BATCH));
    }
    if (parked.length > 0) {
      logger.info("Released {count} parked deliveries to {host}.", {
        count: parked.length,
        host,
      });
    }
  }

  /**
   * Releases some parked deliveries of a host.
   * @param host The host.
   * @param parked The parkings and their messages.
   */
  async release(host: string, parked: readonly { id: string; message: unknown }[]) {
    await Promise.all(parked.map(async ({ id, message }) => {
      const delivery = message as OutboxMessage;
      const options = delivery.orderingKey == null ? {} : { orderingKey: delivery.orderingKey };
      // Enqueued before the record is removed: a crash in between sends
      // it twice, never zero times.
      await this.#producer.produce(this.#outbox, [delivery], options);
      await this.#store.unpark(host, id);
    }));
  }

  /**
   * Fails the parked deliveries past the retention (released marked to
   * fail for good), and sets the host's count of parked deliveries right.
   * @param host The host.
   */
  async expire(host: string): Promise<void> {
    const parked = await this.#store.parked(host);
    const cutoff = Date.now() - this.#retentionMs;
    const expired = parked.filter(({ id }) => {
      const parkedAt = Number(id.slice(0, id.indexOf(".")));
      return Number.isFinite(parkedAt) && parkedAt > 0 && parkedAt < cutoff;
    });
    if (expired.length > 0) {
      const why = `The delivery waited for the unhealthy host ${host} longer than ` +
        `hostHealth.parkedRetention (${this.#retentionMs} ms).`;
      for (let i = 0; i < expired.length; i += RELEASE_BATCH) {
        await this.release(
          host,
          expired.slice(i, i + RELEASE_BATCH).map(({ id, message }) => ({
            id,
            message: { ...(message as OutboxMessage), hostHealthFailure: why },
          })),
        );
      }
      logger.warn("Failed {count} deliveries parked for {host} past the retention.", {
        count: expired.length,
        host,
      });
    }
    const count = parked.length - expired.length;
    await this.#store.update(
      host,
      (current) =>
        current == null || current.healthy || current.parked === count
          ? undefined
          : { ...current, parked: count },
    );
  }
}
