// The storage side of PostgresMessageQueue's listen(): claims, outcomes,
// leases and the wait after a short claim.  runLeaseListener() (in
// @fedwork/core/queue-kit) decides when each of these runs.
import type {
  LeaseClaimRequest,
  LeaseClaimResult,
  LeasedMessage,
  LeaseEngine,
} from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import type { ListenMeta, Sql } from "postgres";
import type { MessageQueueStatements } from "./sql/message-queue.ts";
import { encodeJson } from "./json.ts";

const logger = getLogger(["fedwork", "postgres"]);
const PREPARED = { prepare: true } as const;

/**
 * How long a listener waits before claiming again when its claim came up
 * short although a row was claimable (another transaction held its lock,
 * so `SKIP LOCKED` passed it over, or it became due meanwhile), doubled
 * for each such claim in a row up to {@link MAX_RECLAIM_MS}.
 */
export const RECLAIM_MS = 10;
/** The longest wait between claims while claimable rows stay locked. */
export const MAX_RECLAIM_MS = 1_000;

interface ClaimedRow {
  readonly id: string;
  readonly message: string;
  readonly keyed: boolean;
  readonly priority: number;
  readonly deliveries: number;
}

/**
 * A row leased to a listener.
 * @since 0.4.0
 */
export interface LeasedRow extends LeasedMessage {
  readonly id: string;
  /** The message as JSON text. */
  readonly text: string;
  /** Whether the row has an ordering key. */
  readonly keyed: boolean;
}

/**
 * What a {@link PostgresLeaseEngine} needs from its queue.
 * @since 0.4.0
 */
export interface EngineContext {
  readonly sql: Sql;
  readonly statements: MessageQueueStatements;
  readonly channel: string;
  readonly leaseMs: number;
  initialize(): Promise<void>;
}

/**
 * The storage side of one `listen()` call (see `runLeaseListener()`).
 * Handled rows without an ordering key are deleted by the claim statement
 * itself; keyed ones by a statement of their own that also notifies other
 * listeners (deleting one may make the next row of its key claimable, which
 * the claim's snapshot could not see).
 * @since 0.4.0
 */
export class PostgresLeaseEngine implements LeaseEngine<LeasedRow> {
  readonly #context: EngineContext;
  /** This listener's lease owner id. */
  readonly #owner = crypto.randomUUID();
  #wake: () => void = () => {};
  #subscription: ListenMeta | undefined;
  /** Notifications received so far (and re-listens): tells claims apart. */
  #notifications = 0;
  /** Short claims in a row that left a claimable row behind. */
  #lockedStreak = 0;

  /**
   * Creates the engine of one `listen()` call.
   * @param context The queue's client, statements and settings.
   */
  constructor(context: EngineContext) {
    this.#context = context;
  }

  #notified = (): void => {
    this.#notifications++;
    this.#wake();
  };

  async claim(request: LeaseClaimRequest<LeasedRow>): Promise<LeaseClaimResult<LeasedRow>> {
    const { sql, statements, channel, leaseMs } = this.#context;
    // No closed check: disposing the queue aborts the listener first, and
    // its final call here must still delete the handled rows.
    this.#subscription ??= await sql.listen(
      channel,
      this.#notified,
      // Also called after postgres.js re-listens on a new connection:
      // anything enqueued meanwhile is picked up at once.
      this.#notified,
    );
    await this.#context.initialize();
    const keyed = request.acks.filter((row) => row.keyed).map((row) => row.id);
    const plain = request.acks.filter((row) => !row.keyed).map((row) => row.id);
    if (keyed.length > 0) {
      await sql.unsafe(statements.acknowledge, [keyed, channel, this.#owner], PREPARED);
    }
    if (request.handBacks.length > 0) {
      await sql.unsafe(
        statements.handBack,
        [request.handBacks.map((row) => row.id), leaseMs, this.#owner, channel],
        PREPARED,
      );
    }
    const { count } = request;
    if (count === 0) {
      if (plain.length > 0) {
        await sql.unsafe(statements.acknowledge, [plain, channel, this.#owner], PREPARED);
      }
      return { messages: [] };
    }
    const notificationsBefore = this.#notifications;
    const rows = await sql.unsafe<ClaimedRow[]>(
      plain.length > 0 ? statements.acknowledgeAndClaim : statements.claim,
      plain.length > 0 ? [count, leaseMs, this.#owner, plain] : [count, leaseMs, this.#owner],
      PREPARED,
    );
    // RETURNING gives rows in no promised order; ids grow with enqueues.
    const messages = rows
      .sort((a, b) => b.priority - a.priority || compareIds(a.id, b.id))
      .map((row) => ({
        id: row.id,
        text: row.message,
        keyed: row.keyed,
        deliveryCount: Number(row.deliveries),
      }));
    if (messages.length === count) {
      this.#lockedStreak = 0;
      return { messages };
    }
    // A notification came while the claim was out: the listener claims
    // again at once (it was woken), so the wait query would only delay
    // that claim by a round trip.
    if (this.#notifications !== notificationsBefore) return { messages, waitMs: 0 };
    // Short: sleep until the earliest delayed message is due or a lease
    // that this listener does not renew runs out.  The wait query goes out
    // after the claim, not beside it: sent together (tried for pickup
    // latency), it could read the table before another listener's claim of
    // a due row committed, see that row as neither delayed nor leased, and
    // let this listener sleep past that lease's end (a message stranded
    // until a notification; CI caught it).  The listener runs it once the
    // claimed rows' handlers have started, so that they do not wait for it.
    const held = [...request.held, ...messages];
    return { messages, nextWake: () => this.#waitAfterShortClaim(held) };
  }

  /**
   * How long to sleep after a short claim: until a delayed row is due or a
   * foreign lease runs out, or only briefly when a row the claim should
   * have taken is there after all.
   */
  async #waitAfterShortClaim(held: readonly LeasedRow[]): Promise<number | undefined> {
    const wait = await this.#nextWake(held);
    if (!wait.claimable) {
      this.#lockedStreak = 0;
      return wait.waitMs;
    }
    // SKIP LOCKED passed the row over because another transaction held its
    // lock at that moment (or it became due since).  No notification may
    // announce it (a claimer that locked it and then lost its connection, a
    // user's SELECT FOR UPDATE), so claim again soon rather than at the
    // next poll; backing off while the lock stays held.
    const reclaimMs = Math.min(RECLAIM_MS * 2 ** this.#lockedStreak, MAX_RECLAIM_MS);
    this.#lockedStreak++;
    return wait.waitMs == null ? reclaimMs : Math.min(wait.waitMs, reclaimMs);
  }

  /**
   * How long until a delayed row is due or a lease other than those on
   * `held` runs out, in milliseconds (`undefined` when neither is
   * pending), and whether a row not on `held` is claimable now.
   */
  async #nextWake(
    held: readonly LeasedRow[],
  ): Promise<{ waitMs: number | undefined; claimable: boolean }> {
    const { sql, statements } = this.#context;
    const [next] = await sql.unsafe(
      statements.nextWake,
      [held.map((row) => row.id)],
      PREPARED,
    );
    return {
      waitMs: next.wait_ms == null ? undefined : Math.max(1, next.wait_ms),
      claimable: next.claimable === true,
    };
  }

  async release(messages: readonly LeasedRow[]): Promise<void> {
    const { sql, statements, channel } = this.#context;
    await sql.unsafe(
      statements.release,
      [messages.map((row) => row.id), this.#owner, channel],
      PREPARED,
    );
  }

  async extendLeases(messages: readonly LeasedRow[]): Promise<void> {
    const { sql, statements, leaseMs } = this.#context;
    await sql.unsafe(
      statements.heartbeat,
      [messages.map((row) => row.id), leaseMs, this.#owner],
      PREPARED,
    );
  }

  /**
   * Stores a new version of a running message and releases its lease, so
   * that it is handed out again after the delay; the row keeps its id and
   * so its place in its ordering key.
   */
  async redeliver(message: LeasedRow, payload: unknown, delayMs: number): Promise<void> {
    const { sql, statements, channel } = this.#context;
    const json = encodeJson(payload, "redelivered message");
    const rows = await sql.unsafe(
      statements.redeliver,
      [message.id, json, delayMs, this.#owner, channel],
      PREPARED,
    );
    if (rows.length === 0) {
      throw new Error(
        `Message ${message.id} was not redelivered: its lease ran out and another worker ` +
          "took it over.",
      );
    }
  }

  decode(message: LeasedRow): unknown {
    return JSON.parse(message.text);
  }

  subscribe(wake: () => void): () => void {
    this.#wake = wake;
    return () => {
      this.#wake = () => {};
    };
  }

  async close(): Promise<void> {
    await this.#subscription?.unlisten().catch((error) => {
      logger.debug("UNLISTEN failed: {error}", { error });
    });
  }
}

/** Orders bigint ids given as decimal text. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
