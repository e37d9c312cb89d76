// A Fedwork federation with task batches on a Fedwork engine: what the
// batch crash test (../batch-crash.test.ts) and its worker processes
// (batch-worker.ts) both build.  Members take a while, so that SIGKILLs land
// in the middle of them; some fail for good; one member of each batch fans
// out more members; the completion task appends one line per run to a log
// file, which survives the SIGKILL of the process that wrote it.
import { appendFileSync } from "node:fs";
import {
  createExponentialBackoffPolicy,
  createFederation,
  type Federation,
  PermanentError,
  type TaskDefinition,
} from "@fedwork/core";
import { z } from "zod";
import type { EngineInstance } from "./fedwork-engines.ts";

/** How many members each batch is created with. */
export const BATCH_MEMBERS = 12;
/** The member (by `n`) that adds members while it runs. */
export const FANNING_MEMBER = 1;
/** How many members it adds. */
export const FANNED_OUT = 4;

/** Whether member `n` fails for good. */
export function failsForGood(n: number): boolean {
  return n % 5 === 0 && n < 100;
}

/** The batch app's federation and its tasks. */
export interface BatchApp {
  readonly federation: Federation<void>;
  readonly member: TaskDefinition<void, { n: number }>;
  // deno-lint-ignore no-explicit-any
  readonly finished: TaskDefinition<void, any, any>;
}

/**
 * Builds the app.
 * @param instance The engine's queue and store.
 * @param log The file each run of a completion task appends a line to:
 *            the batch's id, the task's id, the counts, as JSON.
 */
export function createBatchApp(instance: EngineInstance, log: string): BatchApp {
  const federation = createFederation<void>({
    kv: instance.kv,
    queue: instance.queue,
    manuallyStartQueue: true,
    taskRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 10 },
      maxDelay: { milliseconds: 50 },
      maxAttempts: 2,
      jitter: false,
    }),
  });
  const member: TaskDefinition<void, { n: number }> = federation.defineTask("batch-member", {
    schema: z.object({ n: z.number() }),
    async handler(ctx, { n }) {
      // One line per run, so that the test can tell how many runs the
      // kills interrupted (a member run again after its worker died).
      appendFileSync(`${log}.members`, `${ctx.task.id}\n`);
      await new Promise((resolve) => setTimeout(resolve, 40 + Math.random() * 120));
      if (n === FANNING_MEMBER) {
        await ctx.addToBatch(
          Array.from({ length: FANNED_OUT }, (_, i) => ({ task: member, data: { n: 100 + i } })),
        );
      }
      if (failsForGood(n)) throw new PermanentError(`member ${n} fails for good`);
    },
  });
  const finished = federation.defineTask("batch-finished", {
    schema: z.object({
      batchId: z.string(),
      total: z.number(),
      completed: z.number(),
      failed: z.number(),
      failedIds: z.array(z.string()),
      data: z.null(),
    }),
    handler(ctx, completion) {
      appendFileSync(
        log,
        JSON.stringify({
          batchId: completion.batchId,
          taskId: ctx.task.id,
          total: completion.total,
          completed: completion.completed,
          failed: completion.failed,
        }) + "\n",
      );
    },
  });
  return { federation, member, finished };
}
