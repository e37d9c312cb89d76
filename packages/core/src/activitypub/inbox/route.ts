import type { DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { asArray, idOf, messageOf } from "../json-values.ts";
import { hasProof, verifyObject } from "../proofs/proof.ts";
import type { PublicKeyFetcher } from "../signatures/key-cache.ts";
import type { DurationInput } from "../../time/duration.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { Outcome } from "../../processing/outcome.ts";
import {
  claimReceivedActivity,
  receivedActivityKey,
  type ReceivedActivityKeyHost,
  type ReceivedActivityParsing,
} from "./idempotency.ts";
import type { InboxMessage } from "./message.ts";
import type { InboxRefusalLog } from "./refusal-log.ts";

const logger = getLogger(["fedwork", "activitypub", "inbox"]);

/**
 * Options for `Context.routeActivity()`, as in Fedify.
 * @since 0.3.0
 */
export interface RouteActivityOptions {
  /**
   * Whether the listener runs now, in the caller, instead of the activity
   * going through the inbox queue.  Without an inbox queue it always runs
   * now.
   * @default `false`
   */
  readonly immediate?: boolean;
  /**
   * Loads the activity from its origin (when it has no proof) and the keys
   * of its proofs.
   * @default the federation's document loader
   */
  readonly documentLoader?: DocumentLoader;
  /**
   * Loads the JSON-LD contexts the activity is serialized with.
   * @default the federation's context loader
   */
  readonly contextLoader?: DocumentLoader;
}

/**
 * What {@link verifyRoutedActivity} concluded.
 * @since 0.3.0
 */
export type RoutedActivityVerification =
  | {
    readonly ok: true;
    /** The activity to route: as given (proof) or as its origin serves it. */
    readonly activity: Record<string, unknown>;
    /** Its actor, who made the proof or whose origin served it. */
    readonly signer: URL;
  }
  | { readonly ok: false; readonly reason: string };

/**
 * Checks an activity that did not arrive signed in a request (e.g. one
 * enclosed in another activity) before it is routed to inbox listeners, as
 * Fedify's `routeActivity()` does: an activity with Object Integrity Proofs
 * must verify with its actor's key; one without (or whose proof is older
 * than `proofMaxAge`, or made in the future) must be served, with the
 * same id, by its id's origin, which must also be its actor's.  The loads
 * go through the given loader and key fetcher, so through `fetchRemote()`
 * and its limits.
 * @param activity The activity as compact JSON-LD.
 * @param options The loader for the activity's origin and the key fetcher.
 * @returns The activity to trust and its actor, or why it is refused.
 * @since 0.3.0
 */
export async function verifyRoutedActivity(
  activity: Readonly<Record<string, unknown>>,
  options: {
    readonly documentLoader: DocumentLoader;
    readonly fetchKey: PublicKeyFetcher;
    /** The oldest proof accepted (`VerifyProofOptions.maxAge`); since 0.4.0. */
    readonly proofMaxAge?: DurationInput | false;
    /** How far in the future a proof may be made; since 0.4.0. */
    readonly timeWindow?: DurationInput | false;
  },
): Promise<RoutedActivityVerification> {
  const actors = asArray(activity.actor).map((actor) => idOf(actor));
  const actor = actors.length === 1 && actors[0] != null ? URL.parse(actors[0]) : null;
  if (actor == null) return refuse("The activity must have exactly one actor.");
  if (hasProof(activity)) {
    const result = await verifyObject(activity, {
      fetchKey: options.fetchKey,
      ...(options.proofMaxAge === undefined ? {} : { maxAge: options.proofMaxAge }),
      ...(options.timeWindow === undefined ? {} : { timeWindow: options.timeWindow }),
    });
    if (result.verified) return { ok: true, activity: { ...activity }, signer: actor };
    // An old proof (a boost of last month's post) vouches for nothing now,
    // but the activity may still be what its origin serves: check that.
    if (result.reason !== "outsideTimeWindow") {
      return refuse(`Its proof does not verify: ${result.message}`);
    }
  }
  const id = typeof activity.id === "string" ? URL.parse(activity.id) : null;
  if (id == null || (id.protocol !== "https:" && id.protocol !== "http:")) {
    return refuse("Without a proof, the activity needs an http(s) id to be fetched from.");
  }
  if (actor.origin !== id.origin) {
    return refuse(`Its actor ${actor.href} is not on its id's origin ${id.origin}.`);
  }
  let fetched: unknown;
  let documentUrl: string;
  try {
    ({ document: fetched, documentUrl } = await options.documentLoader(id.href));
  } catch (error) {
    return refuse(`It could not be fetched from ${id.href}: ${messageOf(error)}`);
  }
  if (typeof fetched !== "object" || fetched == null || Array.isArray(fetched)) {
    return refuse(`${id.href} did not serve an object.`);
  }
  const served = fetched as Record<string, unknown>;
  if (served.id !== id.href || new URL(documentUrl).origin !== id.origin) {
    return refuse(`${id.href} served another object (${String(served.id)}).`);
  }
  const servedActors = asArray(served.actor).map((value) => idOf(value));
  if (servedActors.length !== 1 || servedActors[0] !== actor.href) {
    return refuse(`${id.href} serves the activity with another actor.`);
  }
  return { ok: true, activity: served, signer: actor };
}

/** The host of the activity's first `actor`, or `"(unknown)"`. */
function actorHostOf(activity: Record<string, unknown>): string {
  const actor = asArray(activity.actor).map((value) => idOf(value))[0];
  if (actor == null) return "(unknown)";
  try {
    return new URL(actor).host || "(unknown)";
  } catch {
    return "(unknown)";
  }
}

function refuse(reason: string): RoutedActivityVerification {
  logger.debug("Refused to route an activity: {reason}", { reason });
  return { ok: false, reason };
}

/**
 * What {@link routeActivity} needs from the federation.  Internal.
 * @typeParam TContextData The context data type.
 * @typeParam TInboxContext The context an idempotency key callback gets.
 * @since 0.4.0
 */
export interface RouteActivityHost<TContextData, TInboxContext>
  extends ReceivedActivityKeyHost<TContextData, TInboxContext> {
  readonly options: ReceivedActivityParsing & {
    readonly kv: KvStore;
    readonly inboxIdempotencyTtlMs: number;
    readonly proofMaxAge: DurationInput | false;
    readonly signatureTimeWindow: DurationInput | false;
  };
  /** Fetches and caches public keys. */
  readonly fetchPublicKey: PublicKeyFetcher;
  /** Logs refused activities at info, once per host per minute (since 0.4.0). */
  readonly inboxRefusals: InboxRefusalLog;
  /**
   * Takes a verified inbox message: enqueues it, or dispatches it now.
   * @param message The message.
   * @param contextData The context data.
   * @param options `immediate` to run it now even with an inbox queue.
   */
  receive(
    message: InboxMessage,
    contextData: TContextData,
    options: { readonly immediate: boolean },
  ): Promise<Outcome | undefined>;
}

/**
 * Routes an activity that did not come through an inbox (one found inside
 * an `Announce`, say) to the inbox listeners, as `ctx.routeActivity()`:
 * trusted only by its own proof or signature, deduplicated with the
 * activities inboxes receive, then enqueued (or run now).
 * @param host The federation.
 * @param from Where it is routed from: the context's origin and data, and
 *             the inbox URL it counts as received at (built only when
 *             needed: the inbox route may not be registered).
 * @param recipient The personal inbox's identifier, or `null`.
 * @param activity The activity as JSON-LD.
 * @param options The loaders and `immediate`.
 * @returns Whether it was routed (or was a duplicate); `false` when it
 *          could not be verified or was dropped as malformed.
 * @throws When it could not be enqueued, or, run now, it failed.
 * @since 0.4.0
 */
export async function routeActivity<TContextData, TInboxContext>(
  host: RouteActivityHost<TContextData, TInboxContext>,
  from: { readonly origin: string; readonly data: TContextData; readonly inboxUrl: () => URL },
  recipient: string | null,
  activity: Record<string, unknown>,
  options: { readonly documentLoader: DocumentLoader; readonly immediate: boolean },
): Promise<boolean> {
  const verified = await verifyRoutedActivity(activity, {
    documentLoader: options.documentLoader,
    fetchKey: host.fetchPublicKey,
    proofMaxAge: host.options.proofMaxAge,
    timeWindow: host.options.signatureTimeWindow,
  });
  if (!verified.ok) {
    host.inboxRefusals.refused({
      host: actorHostOf(activity),
      inbox: "routeActivity()",
      status: null,
      reason: "unroutable",
      message: verified.reason,
    });
    return false;
  }
  // Deduplicated with the activities inboxes receive: a Create that came
  // directly and again inside an Announce runs once.
  const activityId = verified.activity.id;
  const claimed = typeof activityId !== "string" ? null : await receivedActivityKey(host, {
    baseUrl: new URL(from.origin),
    data: from.data,
    recipient,
    inboxUrl: from.inboxUrl(),
    senderOrigin: verified.signer.origin,
    activity: verified.activity,
    identity: { id: activityId },
  });
  if (claimed != null && !await claimReceivedActivity(host.options, claimed)) {
    return true;
  }
  const message: InboxMessage = {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: from.origin,
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity: verified.activity,
    identifier: recipient,
    signer: verified.signer.href,
  };
  let outcome: Outcome | undefined;
  try {
    outcome = await host.receive(message, from.data, { immediate: options.immediate });
  } catch (error) {
    if (claimed != null) await host.options.kv.delete(claimed);
    throw error;
  }
  if (outcome?.type === "dropped") {
    if (claimed != null) await host.options.kv.delete(claimed);
    return false;
  }
  return true;
}
