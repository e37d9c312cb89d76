// Acknowledging deliveries in batches.  An AMQP `basic.ack` with `multiple`
// set acknowledges every delivery of the channel up to its tag, so when
// the handlers of consecutive deliveries have all returned, one frame
// settles them all: the broker does one ack's work for a batch, which is
// what lets a listener outrun a consumer that acknowledges each message on
// its own.  Acknowledgements are sent on the next turn of the event loop
// (or at once on `flush()`), so the batch is whatever finished meanwhile.
//
// Delivery tags grow by one per delivery on a channel, across all its
// consumers, so a `multiple` ack is only sent up to the first delivery that
// is still open (running, held for a redelivery in place, or left for the
// broker); finished deliveries after it are acknowledged one by one.  A
// delivery left unacknowledged stays open for good, so that no `multiple`
// ack ever covers it.
import type { Channel, ConsumeMessage } from "amqplib";

/** Running, held, or left unacknowledged for the broker. */
const OPEN = 0;
/** Its handler finished; the ack waits for the next batch. */
const ACK_PENDING = 1;
/** Acknowledged, or rejected with requeue. */
const SETTLED = 2;

interface Entry {
  readonly delivery: ConsumeMessage;
  state: typeof OPEN | typeof ACK_PENDING | typeof SETTLED;
}

/** Batches the acknowledgements of one channel's deliveries. */
export class AckBatcher {
  readonly #channel: Channel;
  readonly #channelOpen: () => boolean;
  /** Deliveries in tag order, from the oldest not known to be settled. */
  #entries: Entry[] = [];
  #head = 0;
  readonly #byTag = new Map<number, Entry>();
  #scheduled = false;

  constructor(channel: Channel, channelOpen: () => boolean) {
    this.#channel = channel;
    this.#channelOpen = channelOpen;
  }

  /** Records a delivery as it arrives, before its handler runs. */
  delivered(delivery: ConsumeMessage): void {
    const entry: Entry = { delivery, state: OPEN };
    this.#entries.push(entry);
    this.#byTag.set(delivery.fields.deliveryTag, entry);
  }

  /** Acknowledges a delivery, in the next batch. */
  ack(delivery: ConsumeMessage): void {
    const entry = this.#byTag.get(delivery.fields.deliveryTag);
    if (entry == null) {
      this.#channel.ack(delivery);
      return;
    }
    entry.state = ACK_PENDING;
    if (!this.#scheduled) {
      this.#scheduled = true;
      nextTurn(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
  }

  /** Rejects a delivery with requeue, at once. */
  requeue(delivery: ConsumeMessage): void {
    this.#channel.nack(delivery, false, true);
    this.#settled(delivery);
  }

  /**
   * Sends the pending acknowledgements now.  Nothing is sent once the
   * channel closed: the broker then hands those deliveries out again.
   */
  flush(): void {
    if (!this.#channelOpen()) return;
    let last: Entry | undefined;
    // The settled prefix: one `multiple` ack up to its last pending entry.
    while (this.#head < this.#entries.length) {
      const entry = this.#entries[this.#head];
      if (entry.state === OPEN) break;
      if (entry.state === ACK_PENDING) last = entry;
      this.#byTag.delete(entry.delivery.fields.deliveryTag);
      this.#head++;
    }
    if (last != null) this.#channel.ack(last.delivery, true);
    // Past an open delivery, each finished one on its own.
    for (let i = this.#head; i < this.#entries.length; i++) {
      const entry = this.#entries[i];
      if (entry.state !== ACK_PENDING) continue;
      this.#channel.ack(entry.delivery);
      entry.state = SETTLED;
    }
    if (this.#head >= 1024 && this.#head * 2 >= this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Marks a delivery settled without an ack (rejected with requeue). */
  #settled(delivery: ConsumeMessage): void {
    const entry = this.#byTag.get(delivery.fields.deliveryTag);
    if (entry != null) entry.state = SETTLED;
  }
}

const immediate = (globalThis as {
  setImmediate?: (callback: () => void) => unknown;
}).setImmediate;

/** Runs `callback` on the next turn of the event loop. */
function nextTurn(callback: () => void): void {
  if (immediate != null) immediate(callback);
  else setTimeout(callback, 0);
}
