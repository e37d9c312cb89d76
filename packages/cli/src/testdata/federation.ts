// The federation the CLI's tests operate: the same code builds it in the
// test process (which runs its workers) and in the CLI's child process
// (which loads it through app.ts and only reads and steers).  On SQLite
// (one file) or PostgreSQL (tables and a pub/sub prefix of a namespace).
import process from "node:process";
import {
  createFederationBuilder,
  type Federation,
  generateCryptoKeyPair,
  type TaskDefinition,
} from "@fedwork/core";
import { Person } from "@fedify/vocab";
import { PostgresKvStore, PostgresMessageQueue, PostgresPubSub } from "@fedwork/postgres";
import { SqliteKvStore, SqliteMessageQueue, SqlitePubSub } from "@fedwork/sqlite";
import { z } from "zod";

/** Where the federation keeps its state. */
export type CliTestBackend =
  | { readonly backend: "sqlite"; readonly path: string }
  | { readonly backend: "postgres"; readonly namespace: string };

/** The PostgreSQL server the tests use. */
export const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** What the test process changes while its workers run. */
export interface CliTestState {
  /** Whether the `flaky` task throws. */
  broken: boolean;
}

/** A test federation, its tasks, and what to close when done. */
export interface CliTestFederation {
  readonly federation: Federation<void>;
  readonly tasks: {
    readonly flaky: TaskDefinition<void, { n: number }, { n: number }>;
    // deno-lint-ignore ban-types
    readonly long: TaskDefinition<void, {}, {}>;
    /** A recorded step, then a wait for the "approved" event (an hour). */
    // deno-lint-ignore ban-types
    readonly waiting: TaskDefinition<void, {}, {}>;
  };
  close(): Promise<void>;
}

let keyPair: Promise<CryptoKeyPair> | undefined;

/**
 * Builds the test federation on `backend`.
 * @param backend Where its state is.
 * @param state What its tasks read.
 * @returns The federation.
 */
export async function createCliTestFederation(
  backend: CliTestBackend,
  state: CliTestState = { broken: false },
): Promise<CliTestFederation> {
  const builder = createFederationBuilder<void>();
  const flaky = builder.defineTask("flaky", {
    schema: z.object({ n: z.number() }),
    retryPolicy: () => null,
    handler() {
      if (state.broken) throw new Error("flaky is broken");
    },
  });
  const long = builder.defineTask("long", {
    schema: z.object({}),
    retryPolicy: () => null,
    async handler(ctx) {
      // Reports progress until cancelled, so that a watcher that subscribes
      // late still sees an update.
      for (let step = 1; !ctx.task.signal.aborted; step++) {
        await ctx.task.reportProgress({ percent: Math.min(step, 99), data: { step } });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw ctx.task.signal.reason;
    },
  });
  const waiting = builder.defineTask("waiting", {
    schema: z.object({}),
    async handler(ctx) {
      await ctx.step.run("prepare", () => 1);
      await ctx.step.waitForEvent("approval", {
        event: "approved",
        key: ctx.task.id,
        timeout: { hours: 1 },
      });
    },
  });
  builder.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(async () => [await (keyPair ??= generateCryptoKeyPair())]);
  const common = {
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    origin: "https://cli.example",
    hostHealth: { failureThreshold: 1, initialProbeDelay: { hours: 1 } },
    completedTaskRetention: { hours: 1 },
  } as const;
  if (backend.backend === "sqlite") {
    const kv = new SqliteKvStore({ path: backend.path });
    const queue = new SqliteMessageQueue({
      path: backend.path,
      pollInterval: { milliseconds: 50 },
    });
    const pubsub = new SqlitePubSub({ path: backend.path });
    const federation = await builder.build({ ...common, kv, queue, pubsub });
    return {
      federation,
      tasks: { flaky, long, waiting },
      async close() {
        await queue[Symbol.asyncDispose]();
        await pubsub[Symbol.asyncDispose]();
        await kv[Symbol.asyncDispose]();
      },
    };
  }
  const table = backend.namespace.replaceAll("-", "_");
  const kv = new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` });
  const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName: table });
  const pubsub = new PostgresPubSub(POSTGRES_URL, { prefix: `${backend.namespace}:` });
  const federation = await builder.build({ ...common, kv, queue, pubsub });
  return {
    federation,
    tasks: { flaky, long, waiting },
    async close() {
      await queue[Symbol.asyncDispose]();
      await pubsub[Symbol.asyncDispose]();
      await kv[Symbol.asyncDispose]();
    },
  };
}
