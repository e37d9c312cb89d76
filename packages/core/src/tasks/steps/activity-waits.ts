// Which activity types some `waitForActivity()` in the federation can need,
// so that the inbox keeps and matches only those: the types the federation
// declares (`waitedActivities`), known to every process that has the same
// options, and the types of waits that started, written to one entry of the
// key–value store that inboxes read at most once per `maxAgeMs`.  An inbox
// whose federation declares none and where no wait ever started writes
// nothing for its activities.
//
// A declared type is kept from the first activity on: an Accept that
// arrives between the step that sent the Follow and the wait is found.  A
// type only registered by a wait is kept once the inboxes read the entry
// (within `maxAgeMs` of the first wait's start), and from then on for
// REGISTRATION_MS after the latest wait for it started (or longer, while
// such a wait lasts), so that later waits find what arrived before them.
import { getLogger } from "@logtape/logtape";
import { CachedKvRead } from "../../kv/cached-read.ts";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";

const logger = getLogger(["fedwork", "task", "steps"]);

/**
 * How long an inbox trusts its read of the registered activity waits, in
 * milliseconds.
 * @since 0.4.0
 */
export const ACTIVITY_WAITS_MAX_AGE_MS = 1000;

/** How long a type stays registered after the latest wait for it began. */
const REGISTRATION_MS = 30 * 24 * 60 * 60 * 1000;

/** Rewritten by a process once less than this is left of its registration. */
const RENEW_BEFORE_MS = REGISTRATION_MS / 2;

const REGISTRY_KEY: KvKey = ["fedwork", "steps", "activity-waits"];

/** The registry as stored: each type id and until when it is waited for (epoch ms). */
type StoredWaits = Readonly<Record<string, number>>;

/**
 * The clocks and bound of an {@link ActivityWaitRegistry}; tests pass
 * their own.  Internal.
 * @since 0.4.0
 */
export interface ActivityWaitRegistryOptions {
  /** Monotonic milliseconds, for the read's age; `performance.now()` by default. */
  readonly now?: () => number;
  /** Epoch milliseconds, for the registrations; `Date.now()` by default. */
  readonly epoch?: () => number;
  /** {@link ACTIVITY_WAITS_MAX_AGE_MS} by default. */
  readonly maxAgeMs?: number;
}

/**
 * The activity types waits can need, as one process sees them.  Internal.
 * @since 0.4.0
 */
export class ActivityWaitRegistry {
  readonly #kv: KvStore;
  readonly #declared: ReadonlySet<string>;
  readonly #read: CachedKvRead<StoredWaits>;
  readonly #epoch: () => number;
  /** Until when this process registered each type (epoch ms). */
  readonly #registered = new Map<string, number>();

  /**
   * @param kv Where the registry is kept.
   * @param declared The type ids the federation declares.
   * @param options The clocks and bound.
   */
  constructor(
    kv: KvStore,
    declared: readonly string[],
    options: ActivityWaitRegistryOptions = {},
  ) {
    this.#kv = kv;
    this.#declared = new Set(declared);
    this.#read = new CachedKvRead(kv, REGISTRY_KEY, storedWaits, {
      maxAgeMs: options.maxAgeMs ?? ACTIVITY_WAITS_MAX_AGE_MS,
      ...(options.now == null ? {} : { now: options.now }),
      onError: (error) =>
        logger.warn(
          "Could not read which activities tasks wait for; keeping them: {error}",
          { error },
        ),
    });
    this.#epoch = options.epoch ?? Date.now;
  }

  /**
   * Whether a wait can need an activity of these types (its class and
   * superclasses): at once when declared or the last read is recent, else
   * a promise of it.  A failed read says `true` (the activity is kept).
   * @param typeIds The activity's type ids.
   * @returns Whether to keep and match it; never rejects.
   */
  waited(typeIds: readonly string[]): boolean | Promise<boolean> {
    for (const typeId of typeIds) if (this.#declared.has(typeId)) return true;
    const waits = this.#read.get();
    if (!(waits instanceof Promise)) return this.#covers(waits, typeIds);
    return waits.then((read) => this.#covers(read, typeIds), () => true);
  }

  #covers(waits: StoredWaits, typeIds: readonly string[]): boolean {
    const now = this.#epoch();
    for (const typeId of typeIds) {
      const until = waits[typeId];
      if (typeof until === "number" && until > now) return true;
    }
    return false;
  }

  /**
   * Registers a wait for a type, so that inboxes keep its activities: a
   * declared type needs nothing, and a process rewrites the entry only
   * when its own registration nears its end.
   * @param typeId The waited type's id.
   * @param until When the wait times out (epoch ms).
   * @returns Settles once registered.
   * @throws When the store fails.
   */
  async register(typeId: string, until: number): Promise<void> {
    if (this.#declared.has(typeId)) return;
    const now = this.#epoch();
    const wanted = Math.max(until, now + REGISTRATION_MS);
    const registered = this.#registered.get(typeId);
    if (registered != null && registered >= until && registered - now > RENEW_BEFORE_MS) return;
    if (registered == null) {
      logger.info(
        "A task waits for {typeId} activities, which the federation's waitedActivities does " +
          "not declare: one that arrives before the first such wait is registered is not kept.",
        { typeId },
      );
    }
    for (let round = 0; round < 16; round++) {
      const current = await this.#kv.get(REGISTRY_KEY);
      const next: Record<string, number> = {};
      for (const [id, end] of Object.entries(storedWaits(current))) if (end > now) next[id] = end;
      next[typeId] = Math.max(next[typeId] ?? 0, wanted);
      const ttl = { milliseconds: Math.max(...Object.values(next)) - now + 60_000 };
      if (this.#kv.cas == null) {
        await this.#kv.set(REGISTRY_KEY, next, { ttl });
      } else if (!(await this.#kv.cas(REGISTRY_KEY, current, next, { ttl }))) {
        continue;
      }
      this.#registered.set(typeId, next[typeId]);
      // This process's inbox knows at once.
      this.#read.note(next);
      return;
    }
    throw new Error(`Could not register a wait for ${typeId} activities: too busy.`);
  }
}

function storedWaits(value: unknown): StoredWaits {
  if (value == null || typeof value !== "object" || Array.isArray(value)) return {};
  return value as StoredWaits;
}
