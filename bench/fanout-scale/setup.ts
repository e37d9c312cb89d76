// What main.ts hands its sender processes, and what they hand back.

/** The configurations a sender can run, by id. */
export interface SenderConfig {
  readonly id: string;
  readonly label: string;
  /** `bare`: no framework, the floor (bare-sender.ts). */
  readonly framework: "fedwork" | "fedify" | "bare";
  /** The in-process queue's concurrency (a `ParallelMessageQueue` above 1). */
  readonly parallel: number;
  /** Fedwork's `fanoutDeliveries.concurrency`, or 0 for off. */
  readonly direct: number;
  /**
   * Outbox worker processes on a shared Redis queue (outbox-worker.ts),
   * each running `parallel` messages at once; 0 (or absent) sends from the
   * sender process itself.
   */
  readonly workers?: number;
}

export const CONFIGS: readonly SenderConfig[] = [
  {
    id: "fedwork",
    label: "Fedwork, in-process queue",
    framework: "fedwork",
    parallel: 1,
    direct: 0,
  },
  {
    id: "fedify",
    label: "Fedify 2.3, in-process queue",
    framework: "fedify",
    parallel: 1,
    direct: 0,
  },
  {
    id: "fedwork-p8",
    label: "Fedwork, ParallelMessageQueue 8",
    framework: "fedwork",
    parallel: 8,
    direct: 0,
  },
  {
    id: "fedify-p8",
    label: "Fedify 2.3, ParallelMessageQueue 8",
    framework: "fedify",
    parallel: 8,
    direct: 0,
  },
  {
    id: "fedwork-direct16",
    label: "Fedwork, in-process queue, fanoutDeliveries 16",
    framework: "fedwork",
    parallel: 1,
    direct: 16,
  },
  {
    id: "fedwork-redis-w2",
    label: "Fedwork, Redis queue, 2 worker processes × 8",
    framework: "fedwork",
    parallel: 8,
    direct: 0,
    workers: 2,
  },
  {
    id: "bare",
    label: "bare loop: node:http + subtle.sign(), 16 at once",
    framework: "bare",
    parallel: 16,
    direct: 0,
  },
];

/**
 * The configuration of an id.
 * @throws {RangeError} When there is none.
 */
export function configOf(id: string | undefined): SenderConfig {
  const config = CONFIGS.find((c) => c.id === id);
  if (config == null) {
    throw new RangeError(
      `Unknown configuration ${JSON.stringify(id)}; one of ${CONFIGS.map((c) => c.id).join(", ")}.`,
    );
  }
  return config;
}

/** Written by main.ts to a temporary file; read by each sender. */
export interface Setup {
  readonly origins: readonly string[];
  readonly control: string;
  readonly followers: number;
  readonly privateKey: JsonWebKey;
  readonly publicKey: JsonWebKey;
}

/** One sender's line of output. */
export interface SenderResult {
  readonly config: string;
  /**
   * Where `@fedwork/core` resolved in the sender (its src/ or its dist/), for
   * Fedwork's configurations.
   */
  readonly fedworkUrl?: string;
  readonly followers: number;
  readonly deliveries: number;
  /** From `sendActivity()` to the last shared inbox's request. */
  readonly ms: number;
  /** How long `sendActivity()` itself took. */
  readonly enqueuedMs: number;
  /** The sender process's CPU time over the fan-out, user and system. */
  readonly cpuMs: number;
  readonly rssBeforeSendBytes: number;
  readonly peakRssSampledBytes: number;
  /** The kernel's maximum resident set size of the process. */
  readonly maxRssBytes: number;
  readonly received: { received: number; signed: number; rejected: number; bytes: number };
  /**
   * With worker processes: each one's CPU over the fan-out (also counted in
   * `cpuMs`) and peak resident set (not counted in the sender's).
   */
  readonly workers?: readonly { readonly cpuMs: number; readonly peakRssBytes: number }[];
}
