// Activities whose signature failed: Fedify's shape of the reason, and the
// `onUnverifiedActivity()` hook that may answer them instead of the 401.
import type { Activity } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import type { SignatureFailureReason } from "../signatures/verification.ts";
import { parseReceivedActivity, type ReceivedActivityParsing } from "./idempotency.ts";
import type { InboxVerification } from "./verify.ts";

const logger = getLogger(["fedwork", "federation", "inbox"]);

/**
 * Why an inbox refused an activity's signature, as told to an
 * `UnverifiedActivityHandler`.  `type` takes Fedify's three values:
 * `"noSignature"` (the request is not signed), `"keyFetchError"` (the key
 * it names could not be fetched) and `"invalidSignature"` (anything else:
 * a malformed or expired signature, a wrong digest, a signature that does
 * not verify).  `detail` is Fedwork's finer reason, `message` the reason
 * for people and logs.  Unlike Fedify's, a `"keyFetchError"` carries no
 * `result` (the fetch's status or error): the key fetcher logs it.
 * @since 0.3.0
 */
export type UnverifiedActivityReason =
  | {
    readonly type: "noSignature";
    readonly detail: "noSignature";
    readonly message: string;
  }
  | {
    readonly type: "keyFetchError";
    readonly detail: "keyNotFound";
    readonly keyId: URL;
    readonly message: string;
  }
  | {
    readonly type: "invalidSignature";
    readonly detail: Exclude<SignatureFailureReason, "noSignature" | "bodyTooLarge">;
    readonly keyId?: URL;
    readonly message: string;
  };

/**
 * Sees an activity whose signature failed: the federation's
 * `UnverifiedActivityHandler`, generic over the context it gets.
 * @typeParam TContext The request's context.
 * @since 0.4.0
 */
export type UnverifiedActivityHook<TContext> = (
  ctx: TContext,
  activity: Activity,
  reason: UnverifiedActivityReason,
) => void | Response | Promise<void | Response>;

/**
 * Gives an activity whose signature failed to the `onUnverifiedActivity()`
 * hook, if any: its response, or `undefined` for the default 401.  An
 * activity signed by someone else than its actor (`actorMismatch`) had a
 * good signature, and is not the hook's.
 * @param handler The hook, if registered.
 * @param options How the activity is parsed for it.
 * @param ctx The request's context.
 * @param verification The failed verification.
 * @returns The hook's response, or `undefined`.
 * @since 0.4.0
 */
export async function runUnverifiedActivityHook<TContext>(
  handler: UnverifiedActivityHook<TContext> | undefined,
  options: ReceivedActivityParsing,
  ctx: TContext,
  verification: InboxVerification & { readonly ok: false },
): Promise<Response | undefined> {
  if (handler == null || verification.activity == null) return undefined;
  const reason = unverifiedReason(verification);
  if (reason == null) return undefined;
  let activity: Activity;
  try {
    activity = await parseReceivedActivity(options, verification.activity);
  } catch (error) {
    logger.debug(
      "Skipped the unverified activity hook: the activity could not be parsed: {error}",
      {
        error,
      },
    );
    return undefined;
  }
  try {
    const response = await handler(ctx, activity, reason);
    return response instanceof Response ? response : undefined;
  } catch (error) {
    logger.error("The unverified activity hook failed on {activityId}: {error}", {
      activityId: activity.id?.href ?? null,
      error,
    });
    return undefined;
  }
}

/** Fedify's shape of a signature failure, or `null` when it is not one. */
function unverifiedReason(
  verification: InboxVerification & { readonly ok: false },
): UnverifiedActivityReason | null {
  const { reason, message, keyId } = verification;
  switch (reason) {
    case "noSignature":
      return { type: "noSignature", detail: reason, message };
    case "keyNotFound":
      if (keyId != null) return { type: "keyFetchError", detail: reason, keyId, message };
      return { type: "invalidSignature", detail: reason, message };
    case "malformedSignature":
    case "unsupportedAlgorithm":
    case "missingRequiredComponent":
    case "missingDigest":
    case "digestMismatch":
    case "outsideTimeWindow":
    case "invalidSignature":
      return keyId == null
        ? { type: "invalidSignature", detail: reason, message }
        : { type: "invalidSignature", detail: reason, keyId, message };
    default:
      return null;
  }
}
