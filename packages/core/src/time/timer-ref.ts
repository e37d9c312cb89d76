// Whether a pending timer keeps the process alive, on every runtime.

interface RefCountedTimer {
  ref(): unknown;
  unref(): unknown;
}

interface DenoTimerApi {
  refTimer?(id: number): void;
  unrefTimer?(id: number): void;
}

/**
 * Makes a timer keep the process alive (`ref`) or not (`unref`).  Node.js
 * and Bun return timer objects with `ref()`/`unref()`; Deno returns a
 * number and offers `Deno.refTimer()`/`Deno.unrefTimer()` instead.
 * Internal.
 * @param timer What `setTimeout()` or `setInterval()` returned.
 * @param ref Whether the timer keeps the process alive.
 * @since 0.2.0
 */
export function setTimerRef(timer: unknown, ref: boolean): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) {
    const refCounted = timer as RefCountedTimer;
    if (ref) refCounted.ref();
    else refCounted.unref();
  } else if (typeof timer === "number") {
    const deno = (globalThis as { Deno?: DenoTimerApi }).Deno;
    if (ref) deno?.refTimer?.(timer);
    else deno?.unrefTimer?.(timer);
  }
}

/**
 * Lets the process exit while `timer` is pending.  Internal.
 * @param timer What `setTimeout()` or `setInterval()` returned.
 * @since 0.2.0
 */
export function unrefTimer(timer: unknown): void {
  setTimerRef(timer, false);
}
