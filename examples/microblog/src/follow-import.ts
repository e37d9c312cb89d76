// import-follows: follow every account of an imported list (one handle or
// actor URL a line, as Mastodon's "following" export has them) and wait for
// their Accepts, in durable steps.  Each follow is a recorded step, so a
// crash or a retry sends no Follow twice; the waits end the run and free
// the worker until the Accept arrives (ctx.step.waitForActivity(), no
// listener needed) or the week is over.
import { Accept, Follow, isActor } from "@fedify/vocab";
import type { Federation, TaskDefinition } from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import { z } from "zod";
import type { Store } from "./store.ts";

const logger = getLogger(["fedwork", "microblog"]);

/** The most accounts one import follows. */
export const MAX_IMPORTED_FOLLOWS = 100;

/** The longest line of an import (a handle or an actor URL). */
const MAX_ACCOUNT_LENGTH = 2_048;

/** How long an import waits for each Accept by default. */
export const DEFAULT_ACCEPT_WAIT = { days: 7 } as const;

/** What an import did, as its task's result (a type, so it is a task result). */
export type FollowImportResult = {
  /** The actors that accepted, in the list's order. */
  readonly accepted: string[];
  /** The actors that did not answer within the wait. */
  readonly pending: string[];
  /** The lines that named no actor. */
  readonly unknown: string[];
};

const importSchema = z.object({
  user: z.string(),
  accounts: z.array(z.string().min(1).max(MAX_ACCOUNT_LENGTH)).min(1).max(MAX_IMPORTED_FOLLOWS),
  acceptWaitMs: z.number().int().positive().max(30 * 24 * 60 * 60 * 1000).optional(),
});

/** The import's payload. */
export type FollowImport = z.input<typeof importSchema>;

/**
 * The accounts of an import, one a line: blank lines and `#` comments are
 * skipped, a CSV line (Mastodon's export) counts for its first column, and
 * duplicates count once.
 * @throws {RangeError} When there are none or more than {@link MAX_IMPORTED_FOLLOWS}.
 */
export function parseImportList(text: string): string[] {
  const accounts = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const account = line.split(",")[0].trim();
    if (account === "" || account.startsWith("#") || account === "Account address") continue;
    if (account.length <= MAX_ACCOUNT_LENGTH) accounts.add(account);
  }
  if (accounts.size < 1 || accounts.size > MAX_IMPORTED_FOLLOWS) {
    throw new RangeError(
      `An import lists from 1 to ${MAX_IMPORTED_FOLLOWS} accounts; got ${accounts.size}.`,
    );
  }
  return [...accounts];
}

/**
 * Defines the import-follows task on the microblog's federation.
 * @param federation The federation.
 * @param store The app's data (the following list).
 * @returns The task.
 */
export function defineFollowImport(
  federation: Federation<void>,
  store: Store,
): TaskDefinition<void, unknown, FollowImport, FollowImportResult> {
  return federation.defineTask("import-follows", {
    schema: importSchema,
    async handler(ctx, { user, accounts, acceptWaitMs }): Promise<FollowImportResult> {
      const sent: ({ actor: string; follow: string } | null)[] = [];
      // One step a Follow: recorded once sent, never sent again.
      for (const [index, account] of accounts.entries()) {
        sent.push(
          await ctx.step.run(`follow ${index}`, async () => {
            const actor = await ctx.lookupObject(account).catch(() => null);
            if (!isActor(actor) || actor.id == null) return null;
            const follow = new URL(`#follows/${crypto.randomUUID()}`, ctx.getActorUri(user));
            await store.setFollowing(user, actor.id.href, "pending", follow.href);
            await ctx.sendActivity(
              { identifier: user },
              actor,
              new Follow({ id: follow, actor: ctx.getActorUri(user), object: actor.id }),
            );
            return { actor: actor.id.href, follow: follow.href };
          }),
        );
        await ctx.task.reportProgress({
          percent: Math.round(((index + 1) / accounts.length) * 50),
        });
      }
      const result = {
        accepted: [] as string[],
        pending: [] as string[],
        unknown: [] as string[],
      };
      for (const [index, followed] of sent.entries()) {
        if (followed == null) {
          result.unknown.push(accounts[index]);
          continue;
        }
        // Only the followee can accept its Follow: the actor must match.
        const accept = await ctx.step.waitForActivity(`accept ${index}`, {
          type: Accept,
          object: followed.follow,
          actor: followed.actor,
          timeout: acceptWaitMs == null ? DEFAULT_ACCEPT_WAIT : { milliseconds: acceptWaitMs },
        });
        (accept == null ? result.pending : result.accepted).push(followed.actor);
        await ctx.task.reportProgress({
          percent: 50 + Math.round(((index + 1) / sent.length) * 50),
        });
      }
      logger.info(
        "The follow import of {user} ended: {accepted} accepted, {pending} pending, " +
          "{unknown} unknown.",
        {
          user,
          accepted: result.accepted.length,
          pending: result.pending.length,
          unknown: result.unknown.length,
        },
      );
      return result;
    },
  });
}
