import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import type { Webhook, WebhookEventType } from "./types.ts";

/** A webhook as the key–value store keeps it (JSON, secret included). */
export interface StoredWebhook {
  readonly id: string;
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  readonly tasks?: readonly string[];
  readonly secret: string;
  readonly enabled: boolean;
  readonly consecutiveFailures: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly disabledAt?: number;
  readonly lastError?: string;
  /** Extra request headers (secret like the secret: never listed). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly retryPolicy?: {
    readonly maxAttempts: number;
    readonly initialDelayMs: number;
    readonly maxDelayMs: number;
  };
  readonly static?: boolean;
  /** Also the failed events of outgoing deliveries (since 0.3.0). */
  readonly deliveries?: boolean;
  /** Epoch milliseconds. */
  readonly lastSuccessAt?: number;
  /** Epoch milliseconds. */
  readonly lastFailureAt?: number;
  /** The running re-probe of a disabled webhook: only that chain may enable it. */
  readonly probe?: { readonly id: string; readonly round: number; readonly nextAt: number };
}

const PREFIX: KvKey = ["fedwork", "webhook"];

/** How long a process trusts its copy of the webhook list. */
const LIST_CACHE_MS = 5_000;

/**
 * Strips the secret and the header values, and turns times into dates.
 * @param stored The stored webhook.
 * @returns The public view.
 */
export function toWebhook(stored: StoredWebhook): Webhook {
  return {
    id: stored.id,
    url: stored.url,
    events: [...stored.events],
    ...(stored.tasks == null ? {} : { tasks: [...stored.tasks] }),
    enabled: stored.enabled,
    consecutiveFailures: stored.consecutiveFailures,
    createdAt: new Date(stored.createdAt),
    ...(stored.disabledAt == null ? {} : { disabledAt: new Date(stored.disabledAt) }),
    ...(stored.lastError == null ? {} : { lastError: stored.lastError }),
    ...(stored.headers == null ? {} : { headerNames: Object.keys(stored.headers) }),
    ...(stored.retryPolicy == null ? {} : { retryPolicy: { ...stored.retryPolicy } }),
    static: stored.static === true,
    deliveries: stored.deliveries === true,
    ...(stored.lastSuccessAt == null ? {} : { lastSuccessAt: new Date(stored.lastSuccessAt) }),
    ...(stored.lastFailureAt == null ? {} : { lastFailureAt: new Date(stored.lastFailureAt) }),
    ...(stored.probe == null || stored.enabled
      ? {}
      : { nextProbeAt: new Date(stored.probe.nextAt) }),
  };
}

/**
 * The webhooks in a key–value store, under `["fedwork", "webhook", id]`.
 * Counters are updated with `cas()` when the store has it, so that workers
 * failing at once all count.  Internal.
 * @since 0.2.0
 */
export class WebhookStore {
  readonly #kv: KvStore;
  #cache:
    | { readonly at: number; readonly list: Promise<StoredWebhook[]>; value?: StoredWebhook[] }
    | undefined;

  /**
   * @param kv The store; it must have `list()`.
   */
  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  #key(id: string): KvKey {
    return [...PREFIX, id];
  }

  /**
   * Adds a webhook.
   * @param webhook The webhook.
   */
  async add(webhook: StoredWebhook): Promise<void> {
    await this.#kv.set(this.#key(webhook.id), webhook);
    this.#cache = undefined;
  }

  /**
   * Reads one webhook from the store (never cached).
   * @param id The id.
   * @returns The webhook, or `undefined`.
   */
  get(id: string): Promise<StoredWebhook | undefined> {
    return this.#kv.get<StoredWebhook>(this.#key(id));
  }

  /**
   * Removes a webhook.
   * @param id The id.
   * @returns Whether there was one.
   */
  async remove(id: string): Promise<boolean> {
    const present = await this.get(id) !== undefined;
    await this.#kv.delete(this.#key(id));
    this.#cache = undefined;
    return present;
  }

  /**
   * Lists every webhook, oldest first, from the store.
   * @returns The webhooks.
   */
  async list(): Promise<StoredWebhook[]> {
    const list: StoredWebhook[] = [];
    for await (const entry of this.#kv.list(PREFIX)) {
      if (isStoredWebhook(entry.value)) list.push(entry.value);
    }
    return list.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  /**
   * Lists the webhooks from a copy at most a few seconds old: what the
   * per-event path reads, so that an event costs no store round trip.
   * Changes made by this process show at once; other processes' within
   * seconds.
   * @returns The webhooks.
   */
  listCached(): Promise<StoredWebhook[]> {
    const now = Date.now();
    if (this.#cache == null || now - this.#cache.at > LIST_CACHE_MS) {
      const list = this.list();
      const cache: { at: number; list: Promise<StoredWebhook[]>; value?: StoredWebhook[] } = {
        at: now,
        list,
      };
      this.#cache = cache;
      list.then((value) => cache.value = value, () => {
        if (this.#cache === cache) this.#cache = undefined;
      });
    }
    return this.#cache.list;
  }

  /**
   * The cached list when it is fresh and already read, without waiting:
   * lets the per-event path skip a turn of the event loop when, as usual,
   * there are no webhooks.
   * @returns The webhooks, or `undefined` when {@link listCached} must be
   *          awaited.
   */
  peekCached(): StoredWebhook[] | undefined {
    const cache = this.#cache;
    if (cache == null || Date.now() - cache.at > LIST_CACHE_MS) return undefined;
    return cache.value;
  }

  /**
   * Applies `change` to a webhook atomically where the store allows.
   * @param id The id.
   * @param change Returns the new value, or `undefined` to leave it.
   * @returns The value after the change (or as found), or `undefined` when
   *          the webhook is gone.
   */
  async update(
    id: string,
    change: (current: StoredWebhook) => StoredWebhook | undefined,
  ): Promise<StoredWebhook | undefined> {
    const key = this.#key(id);
    for (let round = 0;; round++) {
      const current = await this.get(id);
      if (current == null) return undefined;
      const next = change(current);
      if (next == null) return current;
      if (this.#kv.cas == null) {
        await this.#kv.set(key, next);
      } else if (!await this.#kv.cas(key, current, next)) {
        if (round < 64) continue;
        throw new Error(`Could not update the webhook ${id}: too much contention.`);
      }
      this.#cache = undefined;
      return next;
    }
  }
}

function isStoredWebhook(value: unknown): value is StoredWebhook {
  if (typeof value !== "object" || value == null) return false;
  const webhook = value as Partial<StoredWebhook>;
  return typeof webhook.id === "string" && typeof webhook.url === "string" &&
    Array.isArray(webhook.events) && typeof webhook.secret === "string";
}
