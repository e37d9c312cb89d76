// Deadlines that share one timer per duration.  Every handler run with a
// time limit needs one; a timer of its own cost 0.3 µs on Node.js and
// 1.4 µs on Deno to set and clear, on every message, although almost no
// deadline ever passes.  Runs of one duration end in the order they
// started, give or take, so a first-in first-out list per duration, with
// one timer armed for its oldest live deadline, serves them all.
import { setTimerRef } from "../time/timer-ref.ts";

/**
 * Once the list holds this many more settled entries than live ones, it is
 * compacted: a long run at its head must not make the runs that finished
 * behind it pile up.
 */
const COMPACT_SLACK = 256;
/**
 * How many milliseconds early an entry may fire: timers are scheduled on a
 * clock of whole milliseconds, which can run a fraction ahead of
 * `performance.now()`.
 */
const EARLY_MS = 1;

/**
 * One deadline on a {@link DeadlineList}: `cancel()` it when the run it
 * guards ends before it.  Internal.
 * @since 0.3.0
 */
export interface Deadline {
  /** Forgets the deadline; harmless once it fired or was cancelled. */
  cancel(): void;
}

class Entry implements Deadline {
  readonly at: number;
  fire: (() => void) | undefined;
  readonly #lane: Lane;

  constructor(lane: Lane, at: number, fire: () => void) {
    this.#lane = lane;
    this.at = at;
    this.fire = fire;
  }

  cancel(): void {
    if (this.fire == null) return;
    this.fire = undefined;
    this.#lane.ended();
  }
}

/** The deadlines of one duration, oldest first. */
class Lane {
  readonly #delayMs: number;
  readonly #lanes: Map<number, Lane>;
  #entries: Entry[] = [];
  /** Index of the first entry not yet fired nor dropped. */
  #head = 0;
  /** Entries neither fired nor cancelled. */
  #live = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the timer keeps the process alive: while any entry is live. */
  #timerRef = true;
  readonly #onTimer = () => this.#expire();

  constructor(delayMs: number, lanes: Map<number, Lane>) {
    this.#delayMs = delayMs;
    this.#lanes = lanes;
  }

  add(fire: () => void): Entry {
    const entry = new Entry(this, performance.now() + this.#delayMs, fire);
    this.#entries.push(entry);
    if (this.#live++ === 0) {
      if (this.#timer == null) this.#arm(this.#delayMs);
      else if (!this.#timerRef) this.#setRef(true);
    }
    return entry;
  }

  /** An entry was cancelled. */
  ended(): void {
    if (--this.#live === 0) {
      // Every entry is over.  The timer is left armed for the next run
      // rather than cleared (clearing and setting it again is the cost
      // this saves), but it no longer keeps the process alive.
      this.#entries.length = 0;
      this.#head = 0;
      this.#setRef(false);
      return;
    }
    const entries = this.#entries;
    while (this.#head < entries.length && entries[this.#head].fire == null) this.#head++;
    if (entries.length - this.#head > 2 * this.#live + COMPACT_SLACK) this.#compact();
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(this.#onTimer, Math.max(0, ms));
    this.#timerRef = true;
    if (this.#live === 0) this.#setRef(false);
  }

  #setRef(ref: boolean): void {
    if (this.#timer == null || this.#timerRef === ref) return;
    this.#timerRef = ref;
    setTimerRef(this.#timer, ref);
  }

  #compact(): void {
    this.#entries = this.#entries.slice(this.#head).filter((entry) => entry.fire != null);
    this.#head = 0;
  }

  #expire(): void {
    this.#timer = undefined;
    const now = performance.now() + EARLY_MS;
    const entries = this.#entries;
    while (this.#head < entries.length) {
      const entry = entries[this.#head];
      const fire = entry.fire;
      if (fire != null && entry.at > now) break;
      this.#head++;
      if (fire == null) continue;
      entry.fire = undefined;
      this.#live--;
      fire();
    }
    if (this.#head >= entries.length) {
      // Nothing left: forget the lane, so that a process whose limits vary
      // keeps no list per duration it ever saw.
      this.#entries = [];
      this.#head = 0;
      if (this.#lanes.get(this.#delayMs) === this) this.#lanes.delete(this.#delayMs);
      return;
    }
    if (this.#head > COMPACT_SLACK && this.#head * 2 > entries.length) this.#compact();
    this.#arm(this.#entries[this.#head].at - performance.now());
  }
}

/**
 * Calls functions once their delays pass, with one timer per distinct
 * delay rather than one per call.  A pending deadline keeps the process
 * alive, as a timer would; once all are cancelled the shared timer stays
 * armed but does not.  Internal.
 * @example
 * ```ts ignore
 * const deadline = deadlines.after(30_000, () => controller.abort());
 * await work();
 * deadline.cancel();
 * ```
 * @since 0.3.0
 */
export class DeadlineList {
  readonly #lanes = new Map<number, Lane>();

  /**
   * Calls `fire` after `delayMs` milliseconds unless cancelled first.
   * @param delayMs The delay, at least 0, at most what a timer accepts.
   * @param fire Called once, from a timer; must not throw.
   * @returns The deadline, to cancel.
   */
  after(delayMs: number, fire: () => void): Deadline {
    let lane = this.#lanes.get(delayMs);
    if (lane == null) this.#lanes.set(delayMs, lane = new Lane(delayMs, this.#lanes));
    return lane.add(fire);
  }
}
