// The types of the contexts inbox and outbox listeners receive from a test
// federation, and of the setters that register those listeners, so that a
// listener's `ctx.getSentActivities()` needs no cast.
import type { Activity } from "@fedify/vocab";
import type {
  ActivityClass,
  InboxContext,
  InboxListenerSetters,
  OutboxContext,
  OutboxListenerSetters,
} from "@fedwork/core";
import type { TestContextMethods } from "./types.ts";

/**
 * What an inbox listener of a test federation receives: a real Fedwork
 * `InboxContext` whose `sendActivity()` and `forwardActivity()` record
 * the activity instead of delivering it.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export type MockInboxContext<TContextData> =
  & Omit<InboxContext<TContextData>, "federation" | "clone">
  & TestContextMethods<TContextData>
  & {
    /**
     * The same context with other data; its sent activities start empty.
     * @param data The data.
     * @returns The new context.
     */
    clone(data: TContextData): MockInboxContext<TContextData>;
  };

/**
 * What an outbox listener of a test federation receives: a real Fedwork
 * `OutboxContext` whose `sendActivity()` and `forwardActivity()` record
 * the activity instead of delivering it; `hasDeliveredActivity()` says
 * whether either was called.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export type MockOutboxContext<TContextData> =
  & Omit<OutboxContext<TContextData>, "federation" | "clone">
  & TestContextMethods<TContextData>
  & {
    /**
     * The same context with other data; its sent activities start empty.
     * @param data The data.
     * @returns The new context.
     */
    clone(data: TContextData): MockOutboxContext<TContextData>;
  };

// The setters' other methods, returning the test federation's setters so
// that a chain keeps the test contexts' types.
type Rechained<TSetters, TResult> = {
  [K in keyof TSetters]: TSetters[K] extends (...args: infer A) => TSetters
    ? (...args: A) => TResult
    : TSetters[K];
};

/**
 * The setters `setInboxListeners()` of a test federation returns: core's,
 * with listeners and the error handler typed with {@link MockInboxContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface MockInboxListenerSetters<TContextData> extends
  Omit<
    Rechained<InboxListenerSetters<TContextData>, MockInboxListenerSetters<TContextData>>,
    "on" | "onError"
  > {
  /**
   * Registers the listener for an activity class (and its subclasses).
   * @param type The activity class.
   * @param listener The listener.
   * @returns These setters.
   */
  on<TActivity extends Activity>(
    type: ActivityClass<TActivity>,
    listener: (ctx: MockInboxContext<TContextData>, activity: TActivity) => void | Promise<void>,
  ): MockInboxListenerSetters<TContextData>;
  /**
   * Registers the handler of what a listener throws.
   * @param handler The handler.
   * @returns These setters.
   */
  onError(
    handler: (ctx: MockInboxContext<TContextData>, error: Error) => void | Promise<void>,
  ): MockInboxListenerSetters<TContextData>;
}

/**
 * The setters `setOutboxListeners()` of a test federation returns: core's,
 * with listeners and the error handler typed with {@link MockOutboxContext}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface MockOutboxListenerSetters<TContextData> extends
  Omit<
    Rechained<OutboxListenerSetters<TContextData>, MockOutboxListenerSetters<TContextData>>,
    "on" | "onError"
  > {
  /**
   * Registers the listener for an activity class (and its subclasses).
   * @param type The activity class.
   * @param listener The listener.
   * @returns These setters.
   */
  on<TActivity extends Activity>(
    type: ActivityClass<TActivity>,
    listener: (ctx: MockOutboxContext<TContextData>, activity: TActivity) => void | Promise<void>,
  ): MockOutboxListenerSetters<TContextData>;
  /**
   * Registers the handler of a POST that cannot be parsed or whose
   * listener throws.
   * @param handler The handler.
   * @returns These setters.
   */
  onError(
    handler: (ctx: MockOutboxContext<TContextData>, error: Error) => void | Promise<void>,
  ): MockOutboxListenerSetters<TContextData>;
}
