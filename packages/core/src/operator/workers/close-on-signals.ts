// Closing a federation when the process is asked to stop: the first
// SIGTERM or SIGINT closes it with a grace, a second one ends the grace at
// once, and a third one is left to the runtime (which terminates).  On
// Node.js and Bun through `process`, on Deno through its signal listeners.
import { getLogger } from "@logtape/logtape";
import { assertKnownOptions } from "../../options/known-options.ts";
import { gracePeriodToMilliseconds } from "../../processing/time-limit.ts";
import type { DurationInput } from "../../time/duration.ts";
import { DEFAULT_CLOSE_GRACE_MS, type FederationCloseOptions } from "./shutdown.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * The signals {@link closeOnSignals} can listen to.
 * @since 0.4.0
 */
export type ShutdownSignal = "SIGTERM" | "SIGINT" | "SIGHUP" | "SIGQUIT";

const SHUTDOWN_SIGNALS: readonly ShutdownSignal[] = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"];

/**
 * What {@link closeOnSignals} closes: a `Federation`, or anything with its
 * `close()`.
 * @since 0.4.0
 */
export interface SignalClosable {
  /**
   * Stops taking work, giving running work `options.grace`.
   * @param options The grace.
   */
  close(options?: FederationCloseOptions): Promise<void>;
}

/**
 * Options for {@link closeOnSignals}.
 * @since 0.4.0
 */
export interface CloseOnSignalsOptions {
  /**
   * The grace the first signal closes with: how long running handlers may
   * go on before their signals abort.  A second signal closes with no
   * grace.  A duration, zero or more.
   * @default `{ seconds: 20 }`
   */
  readonly grace?: DurationInput;
  /**
   * The signals to listen to.
   * @default `["SIGTERM", "SIGINT"]`
   */
  readonly signals?: readonly ShutdownSignal[];
}

/**
 * What {@link closeOnSignals} returns: dispose of it (`using`) to stop
 * listening.
 * @since 0.4.0
 */
export interface SignalClosing extends Disposable {
  /**
   * Resolves once a signal came and the `close()` it started has
   * resolved (never rejects: a failed close is logged).
   */
  readonly closed: Promise<void>;
  /** Stops listening to the signals; a close already started goes on. */
  [Symbol.dispose](): void;
}

interface SignalApi {
  add(signal: ShutdownSignal, listener: () => void): void;
  remove(signal: ShutdownSignal, listener: () => void): void;
}

interface DenoSignals {
  addSignalListener(signal: string, listener: () => void): void;
  removeSignalListener(signal: string, listener: () => void): void;
}

interface NodeSignals {
  on(signal: string, listener: () => void): unknown;
  off(signal: string, listener: () => void): unknown;
}

function signalApi(): SignalApi | undefined {
  const deno = (globalThis as { Deno?: Partial<DenoSignals> }).Deno;
  if (typeof deno?.addSignalListener === "function") {
    const api = deno as DenoSignals;
    return {
      add: (signal, listener) => api.addSignalListener(signal, listener),
      remove: (signal, listener) => api.removeSignalListener(signal, listener),
    };
  }
  const process = (globalThis as { process?: Partial<NodeSignals> }).process;
  if (typeof process?.on === "function" && typeof process.off === "function") {
    const api = process as NodeSignals;
    return {
      add: (signal, listener) => void api.on(signal, listener),
      remove: (signal, listener) => void api.off(signal, listener),
    };
  }
  return undefined;
}

/**
 * Closes `federation` when the process gets `SIGTERM` or `SIGINT` (systemd,
 * Kubernetes, Ctrl-C): the first signal calls `close({ grace })`, so that
 * the workers take no more messages and running handlers get the grace to
 * finish; a second one calls `close({ grace: 0 })`, aborting them at once;
 * then it stops listening, so that a third one terminates the process as
 * the runtime does by default.  It never exits the process itself: once the
 * workers have stopped and the engines are disposed of, the process exits
 * by itself.  Works on Node.js, Bun and Deno.
 * @param federation What to close: a `Federation`.
 * @param options The grace and the signals.
 * @returns Dispose of it to stop listening; its `closed` resolves once the
 *          close a signal started has resolved.
 * @throws {UnknownOptionError} When an option's name is unknown.
 * @throws {TypeError} When `federation` has no `close()`, an option is
 *         malformed, or the runtime has no signals (a browser, a worker
 *         platform).
 * @throws {RangeError} When `grace` is negative or too long.
 * @since 0.4.0
 * @example
 * ```ts ignore
 * await using queue = new PostgresMessageQueue(sql);
 * const federation = createFederation({ kv, queue, manuallyStartQueue: true });
 * using _closing = closeOnSignals(federation, { grace: { seconds: 20 } });
 * await federation.startQueue(undefined); // resolves once a signal closed it
 * // leaving the scope disposes of the queue; the process exits by itself
 * ```
 */
export function closeOnSignals(
  federation: SignalClosable,
  options: CloseOnSignalsOptions = {},
): SignalClosing {
  if (typeof federation?.close !== "function") {
    throw new TypeError("closeOnSignals() needs a federation (an object with a close() method).");
  }
  assertKnownOptions(options, ["grace", "signals"], { where: "closeOnSignals()" });
  const graceMs = options.grace == null
    ? DEFAULT_CLOSE_GRACE_MS
    : gracePeriodToMilliseconds(options.grace, "grace");
  const signals = checkSignals(options.signals);
  const api = signalApi();
  if (api == null) {
    throw new TypeError(
      "closeOnSignals() needs process signals (Node.js, Deno or Bun); this runtime has none.",
    );
  }
  let received = 0;
  let listening = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => resolveClosed = resolve);
  const stopListening = () => {
    if (!listening) return;
    listening = false;
    for (const signal of signals) api.remove(signal, listeners.get(signal)!);
  };
  const onSignal = (signal: ShutdownSignal) => {
    received++;
    const first = received === 1;
    if (first) {
      logger.info(
        "Received {signal}: closing; running handlers have {graceMs} ms to finish (send it " +
          "again to abort them at once).",
        { signal, graceMs },
      );
    } else {
      logger.info("Received {signal} again: aborting the running handlers now.", { signal });
      stopListening();
    }
    federation.close({ grace: { milliseconds: first ? graceMs : 0 } }).then(
      () => {
        stopListening();
        resolveClosed();
      },
      (error) => {
        logger.error("Closing on {signal} failed: {error}", { signal, error });
        stopListening();
        resolveClosed();
      },
    );
  };
  const listeners = new Map(signals.map((signal) => [signal, () => onSignal(signal)]));
  for (const [signal, listener] of listeners) api.add(signal, listener);
  return { closed, [Symbol.dispose]: stopListening };
}

function checkSignals(signals: unknown): readonly ShutdownSignal[] {
  if (signals == null) return ["SIGTERM", "SIGINT"];
  if (
    !Array.isArray(signals) || signals.length === 0 ||
    !signals.every((signal) => SHUTDOWN_SIGNALS.includes(signal))
  ) {
    throw new TypeError(
      `The signals option of closeOnSignals() must be a non-empty array of ${
        SHUTDOWN_SIGNALS.join(", ")
      }; got ${JSON.stringify(signals)}.`,
    );
  }
  return [...new Set(signals as ShutdownSignal[])];
}
