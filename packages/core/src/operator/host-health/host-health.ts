import { getLogger } from "@logtape/logtape";
import { isHostFailureStatus, probeHost } from "./probe.ts";
import { type HostHealthRecord, HostHealthStore } from "./store.ts";
import type { HostHealth, HostHealthChange } from "./types.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import type { TaskDefinition } from "../../tasks/definition.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import { DeliveryError } from "../../activitypub/outbox/errors.ts";
import { DeadHostError } from "./errors.ts";
import { PermanentError } from "../../processing/errors.ts";
import {
  enqueueInternalTask,
  INTERNAL_TASK_PREFIX,
  stringRecordSchema,
} from "../internal-tasks/mod.ts";
import type {
  HostHealthOperations,
  HostHealthPort,
  OutboxMessage,
  ResolvedHostHealthOptions,
} from "./api.ts";
import { ParkedDeliveries } from "./parked.ts";
import { loggedError, markRemoteFailureClass } from "../../processing/remote-failure.ts";

const logger = getLogger(["fedwork", "federation", "host-health"]);

/**
 * The name of the built-in task that probes an unhealthy host.
 * @since 0.2.0
 */
export const HOST_PROBE_TASK_NAME = `${INTERNAL_TASK_PREFIX}host-probe`;

type ProbeData = Record<"host" | "origin", string>;

/** Thrown by a probe that got no good answer, so that it is retried later. */
class HostStillUnreachableError extends Error {
  constructor(host: string, reason: string) {
    super(`The host ${host} is still unreachable: ${reason}.`);
    this.name = "HostStillUnreachableError";
  }
}
markRemoteFailureClass(HostStillUnreachableError);

/**
 * The federation's remote-server health: wraps each queued delivery,
 * counts host failures, parks deliveries to unhealthy hosts, probes them
 * with the built-in task `fedwork:host-probe` (deduplicated per host, on
 * the outbox queue, retried with doubling delays) and releases the parked
 * deliveries into the outbox queue when a probe succeeds; declares a host
 * dead after `maxProbeAttempts` failed probes or `maxUnhealthyDuration`,
 * after which its deliveries fail for good until it is released or a
 * delivery after the cool-down succeeds.  Internal.
 * @since 0.2.0
 */
export class FederationHostHealth<TContextData> implements HostHealthOperations {
  readonly #port: HostHealthPort<TContextData>;
  readonly #options: ResolvedHostHealthOptions;
  readonly #store: HostHealthStore;
  readonly #outbox: MessageQueue;
  readonly #probe: TaskDefinition<TContextData, ProbeData, ProbeData>;
  readonly #parked: ParkedDeliveries<TContextData>;

  /**
   * @param port What host health needs from the federation (whose options
   *             check made sure there is an outbox queue and `kv.list()`).
   * @param options The resolved `hostHealth` option.
   */
  constructor(port: HostHealthPort<TContextData>, options: ResolvedHostHealthOptions) {
    const { outbox } = port;
    this.#port = port;
    this.#options = options;
    this.#outbox = outbox;
    this.#store = new HostHealthStore(port.kv);
    this.#parked = new ParkedDeliveries(
      this.#store,
      port.producer,
      outbox,
      options.parkedRetentionMs,
    );
    this.#probe = port.internalTasks.tasks.defineTask(HOST_PROBE_TASK_NAME, {
      schema: stringRecordSchema(["host", "origin"]),
      handler: (ctx, data) => this.#runProbe(data, ctx.task.attempt),
      // Probes run where deliveries run.
      queue: outbox,
      retryPolicy: ({ attempts }) => millisecondsToDuration(this.#probeDelayMs(attempts)),
    }) as TaskDefinition<TContextData, ProbeData, ProbeData>;
  }

  /** The delay before probe number `round` (0 for the first). */
  #probeDelayMs(round: number): number {
    const { initialProbeDelayMs, maxProbeDelayMs } = this.#options;
    return Math.min(initialProbeDelayMs * 2 ** Math.min(round, 40), maxProbeDelayMs);
  }

  /**
   * Delivers one queued message unless its host is unhealthy (then parks
   * it), and counts the outcome for the host.
   * @param message The delivery.
   * @param deliver Delivers it now.
   * @throws What `deliver` throws, unless the failure made (or found) the
   *         host unhealthy, in which case the delivery is parked.
   * @throws {PermanentError} When the host is dead (caused by a
   *         `DeadHostError`), too many deliveries are parked for it, or the
   *         delivery waited parked past the retention.
   */
  async deliver(message: OutboxMessage, deliver: () => Promise<void>): Promise<void> {
    if (typeof message.hostHealthFailure === "string") {
      throw new PermanentError(message.hostHealthFailure);
    }
    const inbox = new URL(message.inbox);
    const host = inbox.host;
    const record = await this.#store.get(host);
    if (record?.dead === true) return await this.#deliverToDead(record, deliver);
    if (record != null && !record.healthy) {
      await this.#park(host, inbox.origin, message);
      return;
    }
    try {
      await deliver();
    } catch (error) {
      if (!(error instanceof DeliveryError) || !countsAgainstHost(error)) throw error;
      if (await this.#countFailure(host, inbox.origin, message, error)) return;
      throw error;
    }
    if (record != null && record.consecutiveFailures > 0) {
      await this.#store.update(
        host,
        (current) =>
          current == null || !current.healthy || current.consecutiveFailures === 0
            ? undefined
            : { ...current, consecutiveFailures: 0 },
      );
    }
  }

  /**
   * Fails a delivery to a dead host at once, but for one delivery per
   * cool-down, which is let through to find out whether it is back.
   */
  async #deliverToDead(record: HostHealthRecord, deliver: () => Promise<void>): Promise<void> {
    const { host } = record;
    const dead = () => deadHostFailure(record);
    const cooldown = this.#options.deadHostCooldownMs;
    const now = Date.now();
    if (cooldown <= 0 || now < (record.trialAt ?? record.since) + cooldown) throw dead();
    // One delivery per cool-down wins the trial; the others fail fast.
    const { before, after } = await this.#store.update(
      host,
      (current) =>
        current?.dead === true && now >= (current.trialAt ?? current.since) + cooldown
          ? { ...current, trialAt: now }
          : undefined,
    );
    if (after?.trialAt !== now || before?.trialAt === now) throw dead();
    logger.info("Trying one delivery to the dead host {host} after its cool-down.", { host });
    try {
      await deliver();
    } catch (error) {
      throw new PermanentError(
        `The host ${host} is dead and the delivery tried after its cool-down failed too.`,
        { cause: error },
      );
    }
    await this.#revive(host, "a delivery after its cool-down succeeded");
  }

  /** Counts a failure; returns whether the delivery was parked. */
  async #countFailure(
    host: string,
    origin: string,
    message: OutboxMessage,
    error: DeliveryError,
  ): Promise<boolean> {
    const now = Date.now();
    const { failureThreshold } = this.#options;
    const firstDelay = this.#probeDelayMs(0);
    const { before, after } = await this.#store.update(host, (current) => {
      const consecutiveFailures = (current?.consecutiveFailures ?? 0) + 1;
      if (current != null && !current.healthy) return { ...current, consecutiveFailures };
      if (consecutiveFailures >= failureThreshold) {
        return {
          host,
          healthy: false,
          consecutiveFailures,
          since: now,
          nextProbeAt: now + firstDelay,
          probeDelayMs: firstDelay,
        };
      }
      return { host, healthy: true, consecutiveFailures, since: current?.since ?? now };
    });
    if (after == null || after.healthy) return false;
    if (before == null || before.healthy) {
      logger.warn(
        "Marked {host} unhealthy after {failures} failed deliveries in a row; parking its " +
          "deliveries and probing it in {delay} ms.",
        { host, failures: after.consecutiveFailures, delay: firstDelay, error: loggedError(error) },
      );
      await this.#notify({
        host,
        healthy: false,
        at: new Date(now),
        consecutiveFailures: after.consecutiveFailures,
        error,
      });
      await this.#enqueueProbe(host, origin, message.baseUrl, firstDelay);
    }
    await this.#park(host, origin, message);
    return true;
  }

  async #park(host: string, origin: string, message: OutboxMessage): Promise<void> {
    const { maxParkedDeliveries, parkedRetentionMs, maxProbeDelayMs } = this.#options;
    const { after: counted } = await this.#store.update(
      host,
      (current) =>
        current == null || current.healthy || current.dead === true
          ? undefined
          : { ...current, parked: (current.parked ?? 0) + 1 },
    );
    if (counted?.dead === true) throw deadHostFailure(counted);
    if (counted != null && !counted.healthy && (counted.parked ?? 0) > maxParkedDeliveries) {
      throw new PermanentError(
        `The host ${host} is unhealthy and already has ${maxParkedDeliveries} parked ` +
          "deliveries (hostHealth.maxParkedDeliveries); this one was not parked.",
      );
    }
    // A parking of its own: the same delivery may be released, fail again
    // and be parked again before its release has removed the old parking.
    // The time first, for the retention the probes enforce.
    const parkingId = `${Date.now()}.${message.id}.${crypto.randomUUID()}`;
    // The store drops a parking well past the retention only if no probe
    // ran to fail it properly (a lost probe on an in-memory queue).  Never
    // sooner than a quarter of an hour past it: a probe merely late (a busy
    // worker, short test delays) must still find the parking to fail it, or
    // the delivery would vanish without a failed record.
    const lostProbeMarginMs = Math.max(2 * maxProbeDelayMs, 15 * 60_000);
    await this.#store.park(host, parkingId, message, parkedRetentionMs + lostProbeMarginMs);
    logger.debug("Parked the delivery {messageId} to the unhealthy host {host}.", {
      messageId: message.id,
      host,
    });
    // The host may have recovered between the check and the parking, after
    // the probe listed the parked deliveries: release this one here.
    const record = await this.#store.get(host);
    if (record == null || record.healthy) {
      await this.#parked.release(host, [{ id: parkingId, message }]);
      return;
    }
    // A probe that was lost (its worker died with an in-memory queue) is
    // replaced; the deduplication key keeps it to one probe per host.
    const overdueAfter = Math.max(record.probeDelayMs ?? 0, 60_000);
    if (record.nextProbeAt != null && Date.now() > record.nextProbeAt + overdueAfter) {
      await this.#enqueueProbe(host, origin, message.baseUrl, 0);
    }
  }

  async #enqueueProbe(host: string, origin: string, baseUrl: string, delayMs: number) {
    try {
      await enqueueInternalTask(this.#port.internalTasks, this.#probe, { host, origin }, {
        baseUrl,
        delay: { milliseconds: delayMs },
        // Without a way to hold the key, probes may double up; they are
        // idempotent, and a host left unprobed would keep its deliveries.
        ...(this.#canDeduplicate() ? { deduplicationKey: host } : {}),
      });
    } catch (error) {
      logger.error("Could not enqueue the probe of {host}: {error}", { host, error });
    }
  }

  #canDeduplicate(): boolean {
    return typeof this.#port.kv.cas === "function" ||
      (this.#outbox.nativeDeduplication === true &&
        typeof this.#outbox.enqueueDeduplicated === "function");
  }

  async #runProbe(data: ProbeData, attempt: number): Promise<void> {
    const { host, origin } = data;
    const record = await this.#store.get(host);
    if (record == null || record.healthy || record.dead === true) {
      // Released, or dead: the parked deliveries go back to the outbox,
      // where they are delivered, or fail for good at once.
      await this.#parked.releaseAll(host);
      if (record?.dead !== true) await this.#checkStillHealthy(host);
      return;
    }
    await this.#parked.expire(host);
    const { userAgent, allowPrivateAddress } = this.#port.http;
    const result = await probeHost(origin, {
      userAgent,
      allowPrivateAddress,
      timeoutMs: this.#options.probeTimeoutMs,
    });
    if (!result.up) {
      const delay = this.#probeDelayMs(attempt + 1);
      const now = Date.now();
      const { after } = await this.#store.update(
        host,
        (current) =>
          current == null || current.healthy || current.dead === true ? undefined : {
            ...current,
            nextProbeAt: now + delay,
            probeDelayMs: delay,
            failedProbes: (current.failedProbes ?? 0) + 1,
          },
      );
      const { maxProbeAttempts, maxUnhealthyDurationMs } = this.#options;
      if (
        after != null && !after.healthy && after.dead !== true &&
        ((after.failedProbes ?? 0) >= maxProbeAttempts ||
          now - after.since >= maxUnhealthyDurationMs)
      ) {
        await this.#declareDead(host, after.failedProbes ?? 0, result.reason);
        return;
      }
      logger.info("The probe of {host} failed ({reason}); probing again in {delay} ms.", {
        host,
        reason: result.reason,
        delay,
      });
      throw new HostStillUnreachableError(host, result.reason);
    }
    await this.#revive(host, "it answers its probe");
    await this.#checkStillHealthy(host);
  }

  /**
   * Keeps probing a host that failed again while its deliveries were being
   * released: the probe enqueued by that failure was deduplicated against
   * this one, still running, so this one must go on.
   */
  async #checkStillHealthy(host: string): Promise<void> {
    const record = await this.#store.get(host);
    if (record != null && !record.healthy) {
      throw new HostStillUnreachableError(
        host,
        "it failed again while its deliveries were released",
      );
    }
  }

  /**
   * Gives up on a host: from now on its deliveries fail for good at once,
   * and its parked deliveries are released to fail (each into the
   * failed-task store, with its `failed` event, like any delivery that
   * failed for good).
   */
  async #declareDead(host: string, failedProbes: number, reason: string): Promise<void> {
    const now = Date.now();
    const { before, after } = await this.#store.update(
      host,
      (current) =>
        current == null || current.healthy || current.dead === true ? undefined : {
          host,
          healthy: false,
          dead: true,
          consecutiveFailures: current.consecutiveFailures,
          since: now,
          failedProbes: current.failedProbes ?? failedProbes,
        },
    );
    if (after?.dead !== true || before?.dead === true) return;
    logger.warn(
      "Declared {host} dead after {failedProbes} failed probes ({reason}); its deliveries " +
        "now fail for good until it is released.",
      { host, failedProbes, reason },
    );
    await this.#notify({
      host,
      healthy: false,
      dead: true,
      at: new Date(now),
      consecutiveFailures: after.consecutiveFailures,
    });
    await this.#parked.releaseAll(host);
  }

  /** Makes a host healthy, tells so, and releases its parked deliveries. */
  async #revive(host: string, why: string): Promise<boolean> {
    const now = Date.now();
    const { before, after } = await this.#store.update(
      host,
      (current) =>
        current == null || current.healthy
          ? undefined
          : { host, healthy: true, consecutiveFailures: 0, since: now },
    );
    const changed = before != null && !before.healthy && after?.healthy === true;
    if (changed) {
      logger.info("{host} is healthy again: {why}.", { host, why });
      await this.#notify({ host, healthy: true, at: new Date(now), consecutiveFailures: 0 });
    }
    await this.#parked.releaseAll(host);
    return changed;
  }

  releaseHost(host: string): Promise<boolean> {
    return this.#revive(String(host), "released by an operator");
  }

  /**
   * Refuses the replay of a failed delivery to a dead host.
   * @param inbox The delivery's inbox.
   * @throws {DeadHostError} When its host is dead.
   */
  async checkReplay(inbox: URL): Promise<void> {
    const record = await this.#store.get(inbox.host);
    if (record?.dead === true) throw new DeadHostError(record.host, new Date(record.since));
  }

  async #notify(change: HostHealthChange): Promise<void> {
    try {
      await this.#options.onChange?.(change);
    } catch (error) {
      logger.error("The hostHealth.onChange callback threw: {error}", { error });
    }
  }

  async listUnhealthyHosts(): Promise<HostHealth[]> {
    const records = (await this.#store.list()).filter((record) => !record.healthy);
    records.sort((a, b) => a.since - b.since);
    return await Promise.all(records.map((record) => this.#toHostHealth(record)));
  }

  async getHostHealth(host: string): Promise<HostHealth | undefined> {
    const record = await this.#store.get(String(host));
    return record == null ? undefined : await this.#toHostHealth(record);
  }

  async #toHostHealth(record: HostHealthRecord): Promise<HostHealth> {
    return {
      host: record.host,
      healthy: record.healthy,
      dead: record.dead === true,
      failedProbes: record.failedProbes ?? 0,
      consecutiveFailures: record.consecutiveFailures,
      since: new Date(record.since),
      ...(record.healthy || record.dead === true || record.nextProbeAt == null
        ? {}
        : { nextProbeAt: new Date(record.nextProbeAt) }),
      parkedDeliveries: await this.#store.countParked(record.host),
    };
  }
}

/** The failure of a delivery to a dead host that was not tried. */
function deadHostFailure(record: HostHealthRecord): PermanentError {
  return new PermanentError(`The host ${record.host} is dead; the delivery was not tried.`, {
    cause: new DeadHostError(record.host, new Date(record.since)),
  });
}

/** Network errors, 5xx, 408 and 429 count against the host; other 4xx not. */
function countsAgainstHost(error: DeliveryError): boolean {
  return error.status == null || isHostFailureStatus(error.status);
}
