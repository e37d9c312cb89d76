// The kit's clock: virtual time that moves only when a test says so.  What
// waits on time in the kit (the queue's delayed messages, retries, key
// TTLs) reads this clock, and advance() runs what falls due on the way, in
// the order it falls due.
import { type DurationInput, durationToMilliseconds } from "@fedwork/core";
import type { TaskRun } from "./types.ts";

/**
 * Something that holds work due at a point of the {@link TestClock}'s
 * time: the kit's message queue is one.  Whatever else comes to wait on
 * time (durable sleeps, say) registers one with
 * {@link TestClock.addTimeline} and `advance()` runs it too.
 * @since 0.4.0
 */
export interface TestTimeline {
  /**
   * When the earliest work it holds is due, in the clock's epoch
   * milliseconds, or `undefined` when it holds none.
   * @returns The due time.
   */
  nextDueAt(): number | undefined;
  /**
   * Runs everything that is due at the clock's current time.
   * @returns What ran.
   */
  runDue(): Promise<readonly TaskRun[]>;
}

/**
 * A controllable clock: `now()` stands still until `advance()` moves it,
 * and moving it runs, in order, every delayed message, retry and other
 * timeline entry that falls due on the way.
 * @since 0.4.0
 */
export class TestClock {
  #now: number;
  readonly #timelines: TestTimeline[] = [];

  /**
   * Makes a clock standing at `start`.
   * @param start Epoch milliseconds, or a `Date`; the wall clock's time
   *              by default.
   * @throws {RangeError} When `start` is not a finite time.
   */
  constructor(start: number | Date = Date.now()) {
    const at = typeof start === "number" ? start : start.getTime();
    if (!Number.isFinite(at)) {
      throw new RangeError("The start of a TestClock must be a finite time (epoch milliseconds).");
    }
    this.#now = at;
  }

  /**
   * The clock's time.
   * @returns Epoch milliseconds.
   */
  now(): number {
    return this.#now;
  }

  /**
   * Registers work that waits on this clock.
   * @param timeline What holds the work.
   * @returns Removes the timeline.
   */
  addTimeline(timeline: TestTimeline): () => void {
    this.#timelines.push(timeline);
    return () => {
      const index = this.#timelines.indexOf(timeline);
      if (index >= 0) this.#timelines.splice(index, 1);
    };
  }

  /**
   * Moves the clock forward by `duration`, stopping at each moment
   * something falls due to run it (so a retry that falls due within the
   * duration runs too), and finally runs what is due at the new time.
   * @param duration How far: a `Temporal.Duration`, `{ minutes: 5 }` or an
   *                 ISO 8601 string; zero runs what is already due.
   * @returns Every run, in the order they happened.
   * @throws {RangeError} When `duration` is negative or not a duration.
   * @throws What a run throws (the kit's run limit, say).
   * @example
   * ```ts ignore
   * await ctx.enqueueTask(remind, { userId: "alice" }, { delay: { minutes: 5 } });
   * const runs = await federation.clock.advance({ minutes: 5 });
   * ```
   */
  async advance(duration: DurationInput): Promise<readonly TaskRun[]> {
    const ms = durationToMilliseconds(duration, "duration");
    if (!(ms >= 0)) throw new RangeError("advance() takes a duration of zero or more.");
    const target = this.#now + ms;
    const runs: TaskRun[] = [];
    for (;;) {
      const next = this.#nextDueAt();
      if (next == null || next > target) break;
      this.#now = Math.max(this.#now, next);
      const ran = await this.#runDue();
      runs.push(...ran);
      // Still due and nothing ran (a timeline that keeps what it cannot
      // run): another step would change nothing, so go to the target.
      const after = this.#nextDueAt();
      if (ran.length === 0 && after === next && after <= this.#now) break;
    }
    this.#now = target;
    runs.push(...await this.#runDue());
    return runs;
  }

  #nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const timeline of this.#timelines) {
      const at = timeline.nextDueAt();
      if (at != null && (next == null || at < next)) next = at;
    }
    return next;
  }

  async #runDue(): Promise<TaskRun[]> {
    const runs: TaskRun[] = [];
    for (const timeline of [...this.#timelines]) runs.push(...await timeline.runDue());
    return runs;
  }
}
