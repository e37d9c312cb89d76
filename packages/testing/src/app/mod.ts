/**
 * `@fedwork/testing/app`: testing a Fedwork (or Fedify) application.  The
 * members of Fedify's `@fedify/testing` mock (`createFederation()`,
 * `sentActivities`, `receiveActivity()`, `reset()`, test contexts) on a real
 * Fedwork federation, plus tasks run on demand and a clock a test moves.
 *
 * @example
 * ```ts ignore
 * import { createFederation } from "@fedwork/testing/app";
 *
 * const federation = createFederation<void>();
 * const remind = federation.defineTask("remind", { schema, handler });
 * const ctx = federation.createContext(new URL("https://example.com/"), undefined);
 * await ctx.enqueueTask(remind, { userId: "alice" }, { delay: { minutes: 5 } });
 * await federation.clock.advance({ minutes: 5 }); // the task runs
 * ```
 * @module
 * @since 0.4.0
 */
export { TestClock, type TestTimeline } from "./clock.ts";
export { TestKvStore } from "./kv-store.ts";
export { type PendingMessage, TestMessageQueue } from "./message-queue.ts";
export { createFederation } from "./federation.ts";
export {
  createContext,
  type CreateContextOptions,
  createInboxContext,
  type CreateInboxContextOptions,
  createOutboxContext,
  type CreateOutboxContextOptions,
  createRequestContext,
  type CreateRequestContextOptions,
} from "./standalone-contexts.ts";
export type {
  MockInboxContext,
  MockInboxListenerSetters,
  MockOutboxContext,
  MockOutboxListenerSetters,
} from "./listener-types.ts";
export type {
  ContextSentActivity,
  MockContext,
  MockFederation,
  MockFederationOptions,
  MockRequestContext,
  PostOutboxActivityOptions,
  ReceiveActivityOptions,
  RunPendingTasksOptions,
  SentActivity,
  TaskRun,
  TestContextMethods,
} from "./types.ts";
