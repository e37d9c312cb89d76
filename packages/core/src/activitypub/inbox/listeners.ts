// Running a queued inbox message: parse the activity within its budget
// and call the listener registered for its class.  Generic over the
// context the listeners get (the federation's InboxContext).
import { getLogger } from "@logtape/logtape";
import { Activity, type DocumentLoader } from "@fedify/vocab";
import {
  type DocumentLoadBudget,
  DocumentLoadBudgetError,
  withDocumentLoadBudget,
} from "../network/document-budget.ts";
import {
  checkDocumentComplexity,
  DocumentTooComplexError,
} from "../network/document-complexity.ts";
import type { UnhandledRun } from "../../processing/dispatcher.ts";
import { MalformedMessageError } from "../../processing/errors.ts";
import type { InboxMessage } from "./message.ts";

const logger = getLogger(["fedwork", "federation", "inbox"]);

/**
 * An activity class, as accepted by `InboxListenerSetters.on()`.
 * @since 0.1.0
 */
export type ActivityClass<TActivity extends Activity = Activity> = new (
  // deno-lint-ignore no-explicit-any
  ...args: any[]
) => TActivity;

/**
 * Handles one received activity: what a registered inbox listener is to
 * {@link handleInboxMessage}.
 * @typeParam TContext The context the listener gets.
 * @since 0.4.0
 */
export type InboxActivityListener<TContext> = (
  ctx: TContext,
  activity: Activity,
) => void | Promise<void>;

/**
 * Told of each inbox activity whose signature was verified, with the
 * verified actor's id.  Internal.
 * @since 0.4.0
 */
export type VerifiedActivityHook = (activity: Activity, signer: string) => Promise<void>;

/**
 * The inbox listeners and error handler {@link handleInboxMessage} calls:
 * the part of a federation's registry it reads.
 * @typeParam TContext The context the listeners get.
 * @since 0.4.0
 */
export interface InboxListenerRegistry<TContext> {
  /** The listeners, by the activity class they were registered for. */
  readonly inboxListeners: ReadonlyMap<ActivityClass, InboxActivityListener<TContext>>;
  /** Called when a listener throws, before the failure is retried. */
  readonly inboxErrorHandler?: (ctx: TContext, error: Error) => void | Promise<void>;
}

/**
 * Finds the listener for an activity: the one registered for its class or
 * for its nearest registered superclass.
 * @param listeners The registered listeners.
 * @param activity The activity.
 * @returns The listener, or `undefined`.
 * @since 0.1.0
 */
export function findInboxListener<TContext>(
  listeners: ReadonlyMap<ActivityClass, InboxActivityListener<TContext>>,
  activity: Activity,
): InboxActivityListener<TContext> | undefined {
  let cls: unknown = activity.constructor;
  while (typeof cls === "function") {
    const listener = listeners.get(cls as ActivityClass);
    if (listener != null) return listener;
    cls = Object.getPrototypeOf(cls);
  }
  return undefined;
}

/**
 * Processes a received activity: parses its JSON-LD and calls the inbox
 * listener for its class.  An unparsable activity throws a
 * `MalformedMessageError` (dropped: retrying would not help); one no
 * listener handles resolves to an {@link UnhandledRun}, for the dispatcher
 * to count as `unhandled`; a listener that throws is reported to the inbox
 * error handler and the error rethrown, for the dispatcher to decide.
 * @param message The inbox message.
 * @param ctx The context to give the listener.
 * @param registry The listeners and the error handler.
 * @param documentLoader Loads remote documents while parsing.
 * @param budget The document limits the activity is held to, and the
 *               budget of the loads parsing it may make (since 0.4.0).
 * @param verified Called with an activity whose signer was verified and
 *                 matches its actor, before its listener (since 0.4.0):
 *                 what wakes `ctx.step.waitForActivity()`.  When it
 *                 throws, the message fails as a listener's error would.
 * @returns Nothing, or an {@link UnhandledRun} when no listener handles it.
 * @since 0.1.0
 */
export async function handleInboxMessage<TContext extends { readonly signal: AbortSignal }>(
  message: InboxMessage,
  ctx: TContext,
  registry: InboxListenerRegistry<TContext>,
  documentLoader: DocumentLoader,
  budget: Omit<DocumentLoadBudget, "signal"> = {},
  verified?: VerifiedActivityHook,
): Promise<void | UnhandledRun> {
  // The request that enqueued it checked the same limits, but a queue row
  // is anyone's: checked again (one linear pass) before any JSON-LD work,
  // so that no row can cost a worker more than a bounded slice of CPU and
  // memory.
  const violation = checkDocumentComplexity(message.activity, budget.limits);
  if (violation != null) throw new MalformedMessageError(violation.message);
  let activity: Activity;
  // A document that could not be loaded (the network, a remote server) is
  // a transient failure to retry; anything else wrong with the activity is
  // malformed and dropped.
  let loadError: unknown;
  // The well-known contexts never need the network (nor an app's loader);
  // beyond them, one activity may make only a few requests, so a hundred
  // remote @context URLs cost a few time limits, not a hundred.
  // The listener's signal bounds parsing too: a remote context that never
  // arrives is part of the activity's time limit.
  const budgeted = withDocumentLoadBudget(documentLoader, { ...budget, signal: ctx.signal });
  const loader: DocumentLoader = async (url, options) => {
    try {
      return await budgeted(url, options);
    } catch (error) {
      // Past the budget or the limits, retrying cannot help: the activity
      // is malformed.
      if (!(error instanceof DocumentLoadBudgetError || error instanceof DocumentTooComplexError)) {
        loadError ??= error;
      }
      throw error;
    }
  };
  try {
    activity = await Activity.fromJsonLd(message.activity, {
      documentLoader: loader,
      contextLoader: loader,
    });
  } catch (error) {
    if (loadError !== undefined) throw error;
    throw new MalformedMessageError(
      `the activity could not be parsed: ${error instanceof Error ? error.message : error}`,
      { cause: error },
    );
  }
  // The request path compared the signer with the activity's `actor` as
  // plain JSON; listeners read it as JSON-LD, where an inline @context can
  // rename terms.  The actor they will see must be the one that signed.
  if (message.signer != null) {
    const actors = activity.actorIds.map((id) => id.href);
    if (actors.length !== 1 || actors[0] !== message.signer) {
      throw new MalformedMessageError(
        `the activity, read as JSON-LD, has the actor ${actors.join(", ") || "(none)"}, ` +
          `not its signer ${message.signer}`,
      );
    }
  }
  // Before the listener, and whether or not one handles the activity:
  // waits need no listener.  Only a verified signer counts.
  if (verified != null && message.signer != null) await verified(activity, message.signer);
  const listener = findInboxListener(registry.inboxListeners, activity);
  if (listener == null) {
    // Not an error, and nothing to retry: the dispatcher logs and counts it.
    const id = activity.id?.href;
    return {
      type: "unhandled",
      reason: `no inbox listener handles ${activity.constructor.name} activities` +
        (id == null ? "" : ` (${id})`),
    };
  }
  try {
    await listener(ctx, activity);
  } catch (error) {
    const errorHandler = registry.inboxErrorHandler;
    if (errorHandler != null) {
      try {
        await errorHandler(ctx, error instanceof Error ? error : new Error(String(error)));
      } catch (handlerError) {
        logger.error("The inbox error handler threw {handlerError}.", {
          messageId: message.id,
          handlerError,
        });
      }
    }
    throw error;
  }
  logger.debug("Handled activity {activityId} ({activityType}).", {
    messageId: message.id,
    activityId: activity.id?.href,
    activityType: activity.constructor.name,
    identifier: message.identifier,
  });
}
