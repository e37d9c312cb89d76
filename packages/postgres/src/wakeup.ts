/**
 * A level-triggered wake-up flag for a listener loop: {@link Wakeup.wake}
 * called while nobody waits is remembered, so a notification that arrives
 * between two checks is never lost.
 */
export class Wakeup {
  #pending = false;
  #resolve: (() => void) | undefined;

  /** Wakes the current or the next {@link Wakeup.wait}. */
  wake(): void {
    if (this.#resolve == null) {
      this.#pending = true;
      return;
    }
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve();
  }

  /**
   * Waits for {@link Wakeup.wake} or for `ms` milliseconds.
   * @param ms The longest wait.
   */
  wait(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#resolve = undefined;
        resolve();
      }, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
      this.#resolve = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
