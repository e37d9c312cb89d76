// The time before which no delivery to a host is made, after it answered
// 429 or 503 with Retry-After: in the key-value store, so that every
// worker sees it, with a TTL, so that it goes away by itself.
import type { KvKey, KvStore } from "../../kv/kv-store.ts";

const PREFIX: KvKey = ["fedwork", "host-policy", "not-before"];

/**
 * The hosts deliveries wait for, in the key-value store: one key per host
 * holding the time (ms since the epoch) before which nothing is sent to
 * it, expiring at that time.  Internal.
 * @since 0.4.0
 */
export class HostWaits {
  readonly #kv: KvStore;

  /**
   * @param kv The federation's key–value store.
   */
  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  /**
   * How long deliveries to a host must still wait.
   * @param host The host (with its port, as a URL's `host`).
   * @param nowMs The current time.
   * @returns The wait in milliseconds; 0 when none.
   */
  async remaining(host: string, nowMs: number): Promise<number> {
    const until = await this.#kv.get<number>([...PREFIX, host]);
    return typeof until === "number" && until > nowMs ? until - nowMs : 0;
  }

  /**
   * Makes deliveries to a host wait until a time, unless they wait longer
   * already.  Two workers may race; the later write wins, and either time
   * is one the host asked for.
   * @param host The host.
   * @param untilMs Until when.
   * @param nowMs The current time.
   */
  async waitUntil(host: string, untilMs: number, nowMs: number): Promise<void> {
    if (untilMs <= nowMs || await this.remaining(host, nowMs) >= untilMs - nowMs) return;
    await this.#kv.set([...PREFIX, host], untilMs, {
      ttl: { milliseconds: Math.max(1000, untilMs - nowMs) },
    });
  }
}
