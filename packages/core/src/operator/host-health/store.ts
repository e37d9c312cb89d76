import type { KvKey, KvStore } from "../../kv/kv-store.ts";

/** One host's record in the key–value store (JSON). */
export interface HostHealthRecord {
  readonly host: string;
  readonly healthy: boolean;
  readonly consecutiveFailures: number;
  /** Epoch milliseconds. */
  readonly since: number;
  /** Epoch milliseconds, while unhealthy. */
  readonly nextProbeAt?: number;
  /** The delay before `nextProbeAt`, in milliseconds, while unhealthy. */
  readonly probeDelayMs?: number;
  /** Probes that failed since the host turned unhealthy (since 0.3.0). */
  readonly failedProbes?: number;
  /**
   * Parked deliveries, about (counted up when parking, set to the real
   * count at each probe); since 0.3.0.
   */
  readonly parked?: number;
  /** Declared dead: deliveries fail fast until released (since 0.3.0). */
  readonly dead?: boolean;
  /** When a delivery was last let through to a dead host, epoch ms. */
  readonly trialAt?: number;
}

const RECORDS: KvKey = ["fedwork", "host-health"];
const PARKED: KvKey = ["fedwork", "host-parked"];
/** Records of healthy hosts fade after a week without failures. */
const HEALTHY_TTL = { days: 7 } as const;

/**
 * Host health records and parked deliveries in a key–value store:
 * `["fedwork", "host-health", host]` and
 * `["fedwork", "host-parked", host, parkingId]` (each parking of a
 * delivery has an id of its own).  Records change through
 * `cas()` when the store has it, so that workers failing on one host at
 * once each count, and each change of state is made (and reported) by
 * exactly one of them.  Internal.
 * @since 0.2.0
 */
export class HostHealthStore {
  readonly #kv: KvStore;

  /**
   * @param kv The store; it must have `list()`.
   */
  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  /**
   * Reads a host's record.
   * @param host The host.
   * @returns The record, or `undefined` for a host that has not failed.
   */
  get(host: string): Promise<HostHealthRecord | undefined> {
    return this.#kv.get<HostHealthRecord>([...RECORDS, host]);
  }

  /**
   * Lists every record.
   * @returns The records.
   */
  async list(): Promise<HostHealthRecord[]> {
    const records: HostHealthRecord[] = [];
    for await (const entry of this.#kv.list(RECORDS)) {
      const value = entry.value as HostHealthRecord;
      if (typeof value?.host === "string") records.push(value);
    }
    return records;
  }

  /**
   * Changes a host's record atomically where the store allows.
   * @param host The host.
   * @param change Returns the new record, or `undefined` to leave it.
   * @returns The record before and after (the same when unchanged).
   */
  async update(
    host: string,
    change: (current: HostHealthRecord | undefined) => HostHealthRecord | undefined,
  ): Promise<{ before?: HostHealthRecord; after?: HostHealthRecord }> {
    const key: KvKey = [...RECORDS, host];
    for (let round = 0;; round++) {
      const before = await this.#kv.get<HostHealthRecord>(key);
      const after = change(before);
      if (after == null) return { before, after: before };
      const options = after.healthy ? { ttl: HEALTHY_TTL } : {};
      if (this.#kv.cas == null) {
        await this.#kv.set(key, after, options);
      } else if (!await this.#kv.cas(key, before, after, options)) {
        if (round < 64) continue;
        throw new Error(`Could not update the health of ${host}: too much contention.`);
      }
      return { before, after };
    }
  }

  /**
   * Parks a delivery until its host recovers.
   * @param host The host.
   * @param id The parking's id (unique to this parking).
   * @param message The message, as it will be enqueued again.
   * @param ttlMs When the store may drop it, in milliseconds (a backstop
   *              for the retention the probes enforce).
   */
  park(host: string, id: string, message: unknown, ttlMs?: number): Promise<void> {
    return this.#kv.set(
      [...PARKED, host, id],
      message,
      ttlMs == null ? {} : { ttl: { milliseconds: ttlMs } },
    );
  }

  /**
   * Removes a parked delivery (after it was enqueued again).
   * @param host The host.
   * @param id The parking's id.
   */
  unpark(host: string, id: string): Promise<void> {
    return this.#kv.delete([...PARKED, host, id]);
  }

  /**
   * Lists a host's parked deliveries.
   * @param host The host.
   * @returns Their ids and messages.
   */
  async parked(host: string): Promise<{ id: string; message: unknown }[]> {
    const parked: { id: string; message: unknown }[] = [];
    for await (const entry of this.#kv.list([...PARKED, host])) {
      parked.push({ id: entry.key[entry.key.length - 1], message: entry.value });
    }
    return parked;
  }

  /**
   * Counts a host's parked deliveries.
   * @param host The host.
   * @returns How many.
   */
  async countParked(host: string): Promise<number> {
    let count = 0;
    for await (const _ of this.#kv.list([...PARKED, host])) count++;
    return count;
  }
}
