// The app of the pause tests (see pause-suite.ts), shared by the test's
// own federation and its worker processes: two tasks, "import" (the one
// paused) and "other" (never paused, to show that the workers are taking
// messages), and an actor whose deliveries are signed.
import {
  createFederationBuilder,
  type Federation,
  generateCryptoKeyPair,
  type KvStore,
  type MessageQueue,
  type PubSub,
  type TaskDefinition,
} from "@fedwork/core";
import { numberSchema } from "./backend-set.ts";

/**
 * What a backend module's `open()` returns for one process of the pause
 * tests: its own clients of the engines, sharing their data per namespace.
 * @since 0.4.0
 */
export interface PauseBackend {
  /** The message queue, for every role. */
  readonly queue: MessageQueue;
  /** The key–value store, where the pause set is kept. */
  readonly kv: KvStore;
  /** The pub/sub transport pause changes are announced on. */
  readonly pubsub: PubSub;
}

/** The app's federation and its two tasks. */
export interface PauseApp {
  readonly federation: Federation<void>;
  readonly importTask: TaskDefinition<void, { n: number }>;
  readonly otherTask: TaskDefinition<void, { n: number }>;
}

/**
 * Builds the app on a backend.
 * @param backend The engines.
 * @param ran Called when a task runs, with its name, payload and attempt.
 */
export async function buildPauseApp(
  backend: PauseBackend,
  ran: (task: string, n: number, attempt: number) => void | Promise<void>,
): Promise<PauseApp> {
  const builder = createFederationBuilder<void>();
  let keyPair: Promise<CryptoKeyPair> | undefined;
  builder.setActorDispatcher("/users/{identifier}", () => null)
    .setKeyPairsDispatcher(async () => [await (keyPair ??= generateCryptoKeyPair())]);
  const importTask = builder.defineTask("import", {
    schema: numberSchema,
    handler: (ctx, data) => ran("import", data.n, ctx.task.attempt),
  });
  const otherTask = builder.defineTask("other", {
    schema: numberSchema,
    handler: (ctx, data) => ran("other", data.n, ctx.task.attempt),
  });
  const federation = await builder.build({
    kv: backend.kv,
    queue: backend.queue,
    pubsub: backend.pubsub,
    allowPrivateAddress: true,
    manuallyStartQueue: true,
  });
  return {
    federation,
    importTask: importTask as TaskDefinition<void, { n: number }>,
    otherTask: otherTask as TaskDefinition<void, { n: number }>,
  };
}
