// Refused inbox requests, logged at info once per remote host per window
// with how many were not logged since, and what would fix them.  The
// hosts are the sender's to choose, so the table is bounded: past its size
// every new host shares one line.
import { getLogger } from "@logtape/logtape";
import type { InboxRejectionReason } from "./verify.ts";

const logger = getLogger(["fedwork", "federation", "inbox"]);

/** The host every refusal counts under once the table is full. */
export const OTHER_HOSTS = "(other hosts)";

/**
 * Why an inbox request or a routed activity was refused: a reason of
 * {@link InboxRejectionReason}, or one of the inbox's own.
 * @since 0.4.0
 */
export type InboxRefusalReason =
  | InboxRejectionReason
  | "challengeNonce"
  | "unencodable"
  | "malformed"
  | "unroutable";

/** One refusal, as the inbox saw it.  Internal. */
export interface InboxRefusal {
  /** The sender's host (its key's, else its actor's), or `"(unknown)"`. */
  readonly host: string;
  /** The inbox URL. */
  readonly inbox: string;
  /** The HTTP status it was answered with, or `null` for a routed activity. */
  readonly status: number | null;
  readonly reason: InboxRefusalReason;
  /** For people: what was wrong. */
  readonly message: string;
}

/** The options of {@link InboxRefusalLog}.  Internal. */
export interface InboxRefusalLogOptions {
  /** How long one line covers a host, in milliseconds.  A minute by default. */
  readonly windowMs?: number;
  /** How many hosts it tracks at once.  1,000 by default. */
  readonly maxHosts?: number;
  /** The clock, for tests. */
  readonly now?: () => number;
}

interface HostWindow {
  readonly startedAt: number;
  suppressed: number;
}

/**
 * Logs refused inbox requests at info level, once per host per window.
 * Internal: one per federation.
 * @since 0.4.0
 */
export class InboxRefusalLog {
  readonly #windowMs: number;
  readonly #maxHosts: number;
  readonly #now: () => number;
  /** Oldest window first: a host's entry is put back at the end when its window restarts. */
  readonly #hosts = new Map<string, HostWindow>();

  /**
   * @param options The window, the table's size and the clock.
   */
  constructor(options: InboxRefusalLogOptions = {}) {
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxHosts = options.maxHosts ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /** How many hosts it tracks now (for tests of its bound). */
  get size(): number {
    return this.#hosts.size;
  }

  /**
   * Records a refusal: logs it at info when its host had no line in the
   * current window (with the count of those not logged in the previous
   * one), else counts it.
   * @param refusal The refusal.
   */
  refused(refusal: InboxRefusal): void {
    const properties = { ...refusal, fix: refusalFix(refusal.reason) };
    const now = this.#now();
    let host = refusal.host;
    let window = this.#hosts.get(host);
    if (window == null) {
      this.#expire(now);
      if (this.#hosts.size >= this.#maxHosts) {
        host = OTHER_HOSTS;
        window = this.#hosts.get(host);
      }
    }
    if (window != null && now - window.startedAt < this.#windowMs) {
      window.suppressed++;
      return;
    }
    // A new window: its line carries the count of the one that ended.
    this.#hosts.delete(host);
    this.#expire(now);
    this.#hosts.set(host, { startedAt: now, suppressed: 0 });
    this.#log({ ...properties, host }, window?.suppressed ?? 0);
  }

  /**
   * Drops the windows that ended, oldest first, logging how many refusals
   * each had counted without a line.
   */
  #expire(now: number): void {
    for (const [host, window] of this.#hosts) {
      if (now - window.startedAt < this.#windowMs) break;
      this.#hosts.delete(host);
      if (window.suppressed > 0) {
        logger.info(
          "Refused {suppressed} more activities from {host} in the minute after the last line " +
            "about it.",
          { host, suppressed: window.suppressed },
        );
      }
    }
  }

  #log(properties: InboxRefusal & { readonly fix: string }, suppressed: number): void {
    const refused = properties.status == null
      ? "Refused to route an activity from {host}"
      : "Refused an inbox request from {host} to {inbox} with {status}";
    logger.info(
      `${refused} ({reason}): {message} {fix}` +
        (suppressed > 0 ? " ({suppressed} more from it were refused without a line.)" : "") +
        " Further refusals from it are counted for a minute, not logged.",
      { ...properties, suppressed },
    );
  }
}

/**
 * What would fix a refusal, or whose it is to fix, for the log line.
 * @param reason The reason.
 * @returns One or two sentences.
 */
export function refusalFix(reason: InboxRefusalReason): string {
  switch (reason) {
    case "noSignature":
      return "The sender must sign its requests (HTTP Signatures or RFC 9421); if it does, a " +
        "proxy in front of this server drops the Signature header.";
    case "malformedSignature":
    case "unsupportedAlgorithm":
    case "missingRequiredComponent":
    case "missingDigest":
      return "The sender's signature is not one this server accepts: the sender's to fix.";
    case "digestMismatch":
      return "The body changed on its way: a proxy that re-encodes or rewrites bodies must pass " +
        "them through untouched.";
    case "invalidSignature":
      return "If every sender fails so, the URL or Host this server sees is not the one signed: " +
        "set the federation's origin option, or have the proxy pass Host (see Deploying).";
    case "outsideTimeWindow":
      return "Check both servers' clocks (NTP); signatureTimeWindow sets how much skew is allowed.";
    case "keyNotFound":
      return "The sender's key could not be fetched: its server may be down, or it is on a " +
        "private address (allowPrivateAddress is for development only).";
    case "actorMismatch":
      return "Someone else than its actor sent it without a proof of the actor: nothing to fix " +
        "here.";
    case "bodyTooLarge":
      return "Raise the inboxMaxBytes option (and the proxy's body limit) if such activities " +
        "are legitimate.";
    case "unreadableBody":
      return "The sender went away mid-body: nothing to fix here.";
    case "invalidJson":
    case "nestingTooDeep":
    case "tooComplex":
      return "The body is not an acceptable JSON object (see the remoteDocuments limits): the " +
        "sender's to fix.";
    case "challengeNonce":
      return "The sender did not answer the signature challenge (inboxChallengePolicy).";
    case "unencodable":
      return "The inbox queue cannot store the activity: the sender's to fix.";
    case "malformed":
      return "The activity is not a valid Activity Streams object: the sender's to fix.";
    case "blockedHost":
      return "The sender's host is blocked by the hostPolicy.block option: nothing to fix here " +
        "unless the block is a mistake.";
    case "unroutable":
      return "The activity carries no proof that verifies and could not be fetched from its " +
        "origin: nothing to fix here unless its origin is yours.";
  }
}
