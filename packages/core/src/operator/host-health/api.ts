import type { HostHealth, HostHealthChange } from "./types.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { BaseMessage } from "../../processing/envelope.ts";
import type { MessageProducer } from "../../processing/producer.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import type { InternalTaskPort } from "../internal-tasks/mod.ts";

/**
 * Reading remote-server health from the federation.  `Federation` has
 * these methods.
 * @since 0.2.0
 */
export interface HostHealthOperations {
  /**
   * Lists the hosts whose deliveries are parked (see the `hostHealth`
   * option); empty when the option is off.
   * @returns The unhealthy hosts, those unhealthy longest first.
   * @since 0.2.0
   */
  listUnhealthyHosts(): Promise<HostHealth[]>;
  /**
   * Reads one host's health.
   * @param host The host, with its port when not the default (what
   *             `new URL(inbox).host` gives).
   * @returns Its health, or `undefined` when no delivery to it has failed
   *          lately (or the `hostHealth` option is off).
   * @since 0.2.0
   */
  getHostHealth(host: string): Promise<HostHealth | undefined>;
  /**
   * Declares a host healthy again: a dead host takes deliveries again, and
   * an unhealthy one gets its parked deliveries released now rather than
   * after its next probe.  Failed deliveries to it stay in the failed-task
   * store; replay them with `retryFailedTask()`.
   * @param host The host, as `listUnhealthyHosts()` names it.
   * @returns Whether it was unhealthy or dead.
   * @since 0.3.0
   * @example
   * ```ts
   * for (const host of await federation.listUnhealthyHosts()) {
   *   if (host.dead) await federation.releaseHost(host.host);
   * }
   * ```
   */
  releaseHost(host: string): Promise<boolean>;
}

/** What host health reads of a queued delivery (an outbox message).  Internal. */
export interface OutboxMessage extends BaseMessage {
  readonly type: "outbox";
  /** The inbox URL the activity goes to. */
  readonly inbox: string;
  /**
   * Set on a parked delivery released to fail (past the parked retention):
   * why.  Host health's own field; no other code writes it.
   */
  readonly hostHealthFailure?: string;
}

/**
 * The federation's `hostHealth` option checked, durations in milliseconds.
 * Internal.
 * @since 0.2.0
 */
export interface ResolvedHostHealthOptions {
  readonly failureThreshold: number;
  readonly initialProbeDelayMs: number;
  readonly maxProbeDelayMs: number;
  readonly probeTimeoutMs: number;
  readonly maxProbeAttempts: number;
  readonly maxUnhealthyDurationMs: number;
  /** `0`: a dead host waits for `releaseHost()`. */
  readonly deadHostCooldownMs: number;
  readonly maxParkedDeliveries: number;
  readonly parkedRetentionMs: number;
  readonly onChange?: (change: HostHealthChange) => void | Promise<void>;
}

/**
 * What {@link FederationHostHealth} needs from the federation.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface HostHealthPort<TContextData> {
  /** Where health records and parked deliveries are kept; needs `list()`. */
  readonly kv: KvStore;
  /** The outbox queue: probes run there and parked deliveries go back. */
  readonly outbox: MessageQueue;
  /** Puts released deliveries back into the outbox queue. */
  readonly producer: MessageProducer<TContextData>;
  /** Defines and enqueues the built-in probe task. */
  readonly internalTasks: InternalTaskPort<TContextData>;
  /** How probes leave: the federation's outgoing-HTTP settings. */
  readonly http: { readonly userAgent: string; readonly allowPrivateAddress: boolean };
}
