// Pausing tasks and roles: the pause set lives in one key–value entry that
// every process reads at start-up and caches; a change is published on the
// federation's pub/sub so that workers see it at once, and each worker
// rereads the entry every PAUSE_REFRESH_MS in case a notification is lost.
// A worker never reads the store per message: it asks the cache.
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { QUEUE_ROLES, type QueueRole } from "../../processing/queue-roles.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";

const logger = getLogger(["fedwork", "pause"]);

/** Where the pause set is kept. */
export const PAUSE_KEY: KvKey = ["fedwork", "paused"];
/** The topic a change of the pause set is announced on. */
export const PAUSE_TOPIC = "fedwork.paused";
/** How often a worker rereads the pause set, in case a notification was lost. */
export const PAUSE_REFRESH_MS = 5_000;
/** How long a paused message waits in its queue before a worker looks again. */
export const PAUSE_RECHECK_MS = 5_000;

/**
 * What is paused in a federation: task names and queue roles.
 * @since 0.4.0
 */
export interface PausedWork {
  /** The names of the paused tasks, sorted. */
  readonly tasks: readonly string[];
  /** The paused roles, in role order. */
  readonly roles: readonly QueueRole[];
}

/**
 * A task to pause or resume: its definition (anything with a `name`) or
 * its name.
 * @since 0.4.0
 */
export type PausableTask = string | { readonly name: string };

/**
 * Pausing and resuming work for the federation.  `Federation` has these
 * methods.
 * @since 0.4.0
 */
export interface PauseOperations {
  /**
   * Pauses a task in every process of the federation: its queued messages
   * stay in their queue, durable, and no worker runs them until
   * `resumeTask()`; a worker that takes one puts it back with a delay,
   * spending no attempt.  A run that started before the pause finishes.
   * The pause is kept in the key–value store, so it holds across restarts.
   * @param task The task's definition or name.
   * @returns Resolves once the pause is stored and announced.
   * @throws {TypeError} When `task` is neither a non-empty name nor an
   *         object with one.
   * @example
   * ```ts ignore
   * await federation.pauseTask(importTask);
   * // … the incident is over:
   * await federation.resumeTask(importTask);
   * ```
   * @since 0.4.0
   */
  pauseTask(task: PausableTask): Promise<void>;
  /**
   * Resumes a task paused with `pauseTask()`; resuming a task that is not
   * paused does nothing.
   * @param task The task's definition or name.
   * @returns Resolves once the change is stored and announced.
   * @throws {TypeError} When `task` is neither a non-empty name nor an
   *         object with one.
   * @since 0.4.0
   */
  resumeTask(task: PausableTask): Promise<void>;
  /**
   * Pauses every queued message of a role (`"inbox"`, `"outbox"`,
   * `"fanout"` or `"task"`) in every process, as `pauseTask()` does for one
   * task.  Work a role does without a queue (in the request) is not held.
   * @param role The role.
   * @returns Resolves once the pause is stored and announced.
   * @throws {TypeError} When `role` is not one of the roles.
   * @since 0.4.0
   */
  pauseRole(role: QueueRole): Promise<void>;
  /**
   * Resumes a role paused with `pauseRole()`.
   * @param role The role.
   * @returns Resolves once the change is stored and announced.
   * @throws {TypeError} When `role` is not one of the roles.
   * @since 0.4.0
   */
  resumeRole(role: QueueRole): Promise<void>;
  /**
   * What is paused now, read from the key–value store.
   * @returns The paused tasks and roles.
   * @since 0.4.0
   */
  listPaused(): Promise<PausedWork>;
}

const NOTHING_PAUSED: PausedWork = { tasks: [], roles: [] };

/**
 * The pause set of a federation: its store, its notifications, and the
 * cache workers consult for every message.  Internal.
 * @since 0.4.0
 */
export class FederationPauses implements PauseOperations {
  readonly #kv: KvStore;
  readonly #pubsub: PubSub;
  #tasks: ReadonlySet<string> = new Set();
  #roles: ReadonlySet<string> = new Set();
  /** Whether anything is paused: the one check a message pays otherwise. */
  #any = false;

  /**
   * @param kv Where the pause set is kept.
   * @param pubsub Where changes are announced.
   */
  constructor(kv: KvStore, pubsub: PubSub) {
    this.#kv = kv;
    this.#pubsub = pubsub;
  }

  pauseTask(task: PausableTask): Promise<void> {
    const name = taskNameOf(task, "pauseTask()");
    return this.#change((set) => ({ ...set, tasks: [...new Set([...set.tasks, name])].sort() }));
  }

  resumeTask(task: PausableTask): Promise<void> {
    const name = taskNameOf(task, "resumeTask()");
    return this.#change((set) => ({ ...set, tasks: set.tasks.filter((t) => t !== name) }));
  }

  pauseRole(role: QueueRole): Promise<void> {
    checkRole(role, "pauseRole()");
    return this.#change((set) => ({
      ...set,
      roles: QUEUE_ROLES.filter((r) => r === role || set.roles.includes(r)),
    }));
  }

  resumeRole(role: QueueRole): Promise<void> {
    checkRole(role, "resumeRole()");
    return this.#change((set) => ({ ...set, roles: set.roles.filter((r) => r !== role) }));
  }

  async listPaused(): Promise<PausedWork> {
    const set = parsePausedWork(await this.#kv.get(PAUSE_KEY));
    this.#apply(set);
    return set;
  }

  /**
   * Whether a message taken off a queue is paused, from the cache.
   * @param message The message.
   * @returns `true` when its role or its task is paused.
   */
  held(message: unknown): boolean {
    if (!this.#any) return false;
    const { type, taskName } = (message ?? {}) as { type?: unknown; taskName?: unknown };
    if (typeof type !== "string") return false;
    if (this.#roles.has(type)) return true;
    return type === "task" && typeof taskName === "string" && this.#tasks.has(taskName);
  }

  /**
   * Keeps the cache current until the signal aborts: reads the pause set,
   * subscribes to its changes and rereads it every
   * {@link PAUSE_REFRESH_MS}.  Resolves once the first read is done and the
   * subscription is made, so that workers started after it see a pause
   * made before they started.
   * @param signal Stops the watching.
   */
  async watch(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const refresh = () =>
      this.listPaused().catch((error) => {
        logger.warn("Could not read the paused tasks and roles; keeping the last known: {error}", {
          error,
        });
      });
    const timer = setInterval(refresh, PAUSE_REFRESH_MS);
    // A refresh must not keep a process alive on its own.
    (timer as { unref?: () => void }).unref?.();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
    await Promise.all([
      refresh(),
      this.#pubsub.subscribe(PAUSE_TOPIC, (payload) => {
        try {
          this.#apply(parsePausedWork(JSON.parse(payload)));
        } catch {
          void refresh();
        }
      }, { signal }).catch((error) => {
        logger.warn("Could not subscribe to pause changes; rereading every {ms} ms: {error}", {
          ms: PAUSE_REFRESH_MS,
          error,
        });
      }),
    ]);
  }

  async #change(update: (set: PausedWork) => PausedWork): Promise<void> {
    const cas = this.#kv.cas?.bind(this.#kv);
    let next: PausedWork;
    for (let tries = 0;; tries++) {
      const current = await this.#kv.get(PAUSE_KEY);
      next = update(parsePausedWork(current));
      if (cas == null) {
        await this.#kv.set(PAUSE_KEY, next);
        break;
      }
      if (await cas(PAUSE_KEY, current, next)) break;
      if (tries >= 100) {
        throw new Error("Could not store the pause set: too many concurrent changes.");
      }
    }
    this.#apply(next);
    logger.info("Paused now: tasks {tasks}, roles {roles}.", { ...next });
    await this.#pubsub.publish(PAUSE_TOPIC, JSON.stringify(next)).catch((error) => {
      logger.warn("Could not announce the pause change; workers see it within {ms} ms: {error}", {
        ms: PAUSE_REFRESH_MS,
        error,
      });
    });
  }

  #apply(set: PausedWork): void {
    this.#tasks = new Set(set.tasks);
    this.#roles = new Set(set.roles);
    this.#any = this.#tasks.size > 0 || this.#roles.size > 0;
  }
}

function parsePausedWork(value: unknown): PausedWork {
  if (value == null || typeof value !== "object") return NOTHING_PAUSED;
  const { tasks, roles } = value as { tasks?: unknown; roles?: unknown };
  return {
    tasks: Array.isArray(tasks) ? tasks.filter((t): t is string => typeof t === "string") : [],
    roles: Array.isArray(roles)
      ? QUEUE_ROLES.filter((role) => (roles as unknown[]).includes(role))
      : [],
  };
}

function taskNameOf(task: PausableTask, where: string): string {
  const name = typeof task === "string" ? task : (task as { name?: unknown } | null)?.name;
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${where} needs a task definition or a non-empty task name.`);
  }
  return name;
}

function checkRole(role: unknown, where: string): void {
  if (!QUEUE_ROLES.includes(role as QueueRole)) {
    throw new TypeError(
      `${where} needs one of the roles ${QUEUE_ROLES.join(", ")}; got ${JSON.stringify(role)}.`,
    );
  }
}
