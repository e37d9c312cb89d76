import type { MessageQueue, MessageQueueHandler } from "@fedwork/core";
import { createTestNamespace } from "./namespace.ts";
import type { MessageQueueFactory } from "./types.ts";
import { within } from "./wait.ts";

/** How long the suite waits for any single expected event. */
export const EVENT_TIMEOUT_MS = 30_000;

/**
 * Imports a factory module and returns its factory, accepting both named
 * exports and a default export.
 * @param url The module's URL.
 * @returns The factory.
 * @throws {TypeError} When the module exports no `createQueue` function.
 */
export async function loadQueueFactory(url: string): Promise<MessageQueueFactory> {
  const module = await import(url) as Partial<MessageQueueFactory> & {
    default?: Partial<MessageQueueFactory>;
  };
  const factory = typeof module.createQueue === "function" ? module : module.default;
  if (factory == null || typeof factory.createQueue !== "function") {
    throw new TypeError(
      `The factory module ${url} must export a createQueue(namespace, { leaseMs }) ` +
        "function (as a named export or as a property of its default export).",
    );
  }
  if (factory.cleanup != null && typeof factory.cleanup !== "function") {
    throw new TypeError(`The factory module ${url} exports a cleanup that is not a function.`);
  }
  return factory as MessageQueueFactory;
}

/** A running `listen()` call started by {@link QueueTestRun.listen}. */
export interface RunningListener {
  readonly controller: AbortController;
  /** The promise `listen()` returned. */
  readonly done: Promise<void>;
}

/**
 * The queues and listeners of one test, all of which are torn down at its
 * end: listeners aborted and awaited, then instances disposed, then the
 * namespace cleaned up.
 */
export class QueueTestRun {
  readonly namespace: string = createTestNamespace();
  readonly factory: MessageQueueFactory;
  readonly leaseMs: number;
  readonly #queues: MessageQueue[] = [];
  readonly #listeners: RunningListener[] = [];

  constructor(factory: MessageQueueFactory, leaseMs: number) {
    this.factory = factory;
    this.leaseMs = leaseMs;
  }

  /**
   * Creates a new instance attached to this test's namespace.
   * @param options A lease other than the suite's, and a prefetch.
   */
  async createQueue(
    options: { readonly leaseMs?: number; readonly prefetch?: number } = {},
  ): Promise<MessageQueue> {
    const queue = await this.factory.createQueue(this.namespace, {
      leaseMs: options.leaseMs ?? this.leaseMs,
      ...(options.prefetch == null ? {} : { prefetch: options.prefetch }),
    });
    this.#queues.push(queue);
    return queue;
  }

  /** Starts listening; the listener is aborted and awaited at the end. */
  listen(queue: MessageQueue, handler: MessageQueueHandler): RunningListener {
    const controller = new AbortController();
    const done = queue.listen(handler, { signal: controller.signal });
    // Attach a handler now so a rejection surfaces where it is awaited,
    // not as an unhandled rejection that kills the test process.
    done.catch(() => {});
    const listener = { controller, done };
    this.#listeners.push(listener);
    return listener;
  }

  /** Aborts the listeners, awaits them, disposes the instances, cleans up. */
  async close(): Promise<void> {
    const errors: unknown[] = [];
    for (const listener of this.#listeners) listener.controller.abort();
    for (const listener of this.#listeners) {
      try {
        await within(
          listener.done,
          "listen() to resolve after its signal was aborted",
          EVENT_TIMEOUT_MS,
        );
      } catch (error) {
        errors.push(error);
      }
    }
    for (const queue of this.#queues) {
      try {
        const dispose = (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose];
        if (dispose != null) {
          await within(
            Promise.resolve(dispose.call(queue)),
            "[Symbol.asyncDispose]() of a queue instance",
            EVENT_TIMEOUT_MS,
          );
        }
      } catch (error) {
        errors.push(error);
      }
    }
    try {
      if (this.factory.cleanup != null) {
        await within(
          this.factory.cleanup(this.namespace),
          `cleanup(${JSON.stringify(this.namespace)})`,
          EVENT_TIMEOUT_MS,
        );
      }
    } catch (error) {
      errors.push(error);
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      throw new AggregateError(errors, "Tearing down the queue test failed.");
    }
  }
}

/**
 * Runs one message-queue test body with a fresh {@link QueueTestRun} and
 * always tears it down, reporting the body's error before teardown errors.
 */
export async function runQueueTest(
  factoryModule: string,
  leaseMs: number,
  body: (run: QueueTestRun) => Promise<void>,
): Promise<void> {
  const run = new QueueTestRun(await loadQueueFactory(factoryModule), leaseMs);
  try {
    await body(run);
  } catch (error) {
    // The body's own failure is the more useful one to report.
    await run.close().catch(() => {});
    throw error;
  }
  await run.close();
}
