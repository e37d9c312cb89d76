// Waits for inbox activities: `ctx.step.waitForActivity()` listens on an
// internal event whose key is a digest of what it waits for (the type and
// the object, the actor or both), and the inbox, once an activity's
// signature is verified, sends that event under every key the activity
// matches.  A stranger's activity has the stranger as its actor and so
// cannot reach a wait that names another actor; one naming an object it
// does not have reaches no wait on that object.
import { Activity, IntransitiveActivity } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { encodeTaskPayload } from "../codec/mod.ts";
import type { ActivityWaitRegistry } from "./activity-waits.ts";
import { publishStepEvent, type WakeTask } from "./events.ts";
import { DEFAULT_STEP_EVENT_WINDOW_MS, MAX_STEP_RECORD_BYTES } from "./limits.ts";
import type { ActivityType, WaitForActivityOptions } from "./types.ts";

const logger = getLogger(["fedwork", "task", "steps"]);

/**
 * The name of the internal event verified inbox activities are sent as.
 * Internal.
 * @since 0.4.0
 */
export const ACTIVITY_EVENT = "fedwork:activity";

/** The longest URL a wait or an activity is matched on. */
const MAX_MATCH_URL_LENGTH = 2048;

/** How many classes of an activity's class chain it is published under. */
const MAX_TYPE_DEPTH = 3;

/**
 * The key of the activity event for a type, object and actor: a digest,
 * so that long URLs cost no more than short ones.
 */
async function matchKey(
  typeId: string,
  object: string | undefined,
  actor: string | undefined,
): Promise<string> {
  const text = JSON.stringify([typeId, object ?? null, actor ?? null]);
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function typeIdOf(type: unknown): string | undefined {
  if (typeof type !== "function") return undefined;
  const typeId = (type as { readonly typeId?: unknown }).typeId;
  return typeId instanceof URL ? typeId.href : undefined;
}

function urlOf(option: string, value: unknown): string {
  let href: string | undefined;
  if (value instanceof URL) href = value.href;
  else if (typeof value === "string") {
    try {
      href = new URL(value).href;
    } catch {
      href = undefined;
    }
  } else if (value != null && typeof value === "object") {
    const id = (value as { readonly id?: unknown }).id;
    if (id instanceof URL) href = id.href;
  }
  if (href == null || href.length > MAX_MATCH_URL_LENGTH) {
    throw new TypeError(
      `The ${option} option of waitForActivity() must be an absolute URL (or an object with an ` +
        `id) of at most ${MAX_MATCH_URL_LENGTH} characters.`,
    );
  }
  return href;
}

/**
 * Checks the options of a `waitForActivity()` and gives the key of the
 * event it waits for.  Internal.
 * @param options The options.
 * @returns The event key.
 * @throws {TypeError} When the type is not a vocabulary activity class,
 *         neither an object nor an actor is given, or one is not a URL.
 * @since 0.4.0
 */
export function activityWaitKey(
  options: WaitForActivityOptions<Activity>,
): Promise<string> {
  assertKnownOptions(options, ["type", "object", "actor", "timeout"], {
    where: "waitForActivity()",
  });
  const typeId = typeIdOf(options.type);
  if (typeId == null || !(options.type.prototype instanceof Activity)) {
    throw new TypeError(
      "The type option of waitForActivity() must be an activity class of @fedify/vocab, " +
        "e.g. Accept.",
    );
  }
  if (options.object == null && options.actor == null) {
    throw new TypeError(
      "waitForActivity() needs an object or an actor (or both) to match, so that not any " +
        "server's activity of the type resolves it: e.g. { type: Accept, object: follow, " +
        "actor: followee }.",
    );
  }
  return matchKey(
    typeId,
    options.object == null ? undefined : urlOf("object", options.object),
    options.actor == null ? undefined : urlOf("actor", options.actor),
  );
}

/**
 * The type id of an activity class of `@fedify/vocab`, as waits and the
 * `waitedActivities` option name it.  Internal.
 * @param type The class.
 * @returns Its type IRI, or `undefined` when it is not an activity class.
 * @since 0.4.0
 */
export function activityTypeIdOf(type: unknown): string | undefined {
  const typeId = typeIdOf(type);
  if (typeId == null) return undefined;
  return (type as { prototype?: unknown }).prototype instanceof Activity ? typeId : undefined;
}

/** The type ids of an activity's class and its superclasses below Activity. */
function typeIdsOf(activity: Activity): string[] {
  const ids: string[] = [];
  let cls: unknown = activity.constructor;
  while (
    typeof cls === "function" && cls !== Activity && cls !== IntransitiveActivity &&
    ids.length < MAX_TYPE_DEPTH
  ) {
    const typeId = typeIdOf(cls as ActivityType<Activity>);
    if (typeId != null) ids.push(typeId);
    cls = Object.getPrototypeOf(cls);
  }
  return ids;
}

/**
 * Sends a verified inbox activity to the tasks waiting for it with
 * `ctx.step.waitForActivity()`, and keeps it for the event window: under
 * its type and object, its type and actor, and all three.  Only the inbox
 * calls this, after the activity's signature was verified and its actor
 * found to be the signer.  An activity over {@link MAX_STEP_RECORD_BYTES}
 * encoded resolves no wait (logged).  Internal.
 * @param kv The store.
 * @param wake Puts a woken task's message into its queue.
 * @param activity The verified activity.
 * @param signer The verified actor's id.
 * @param waits Which types waits can need: an activity of no such type is
 *              neither encoded nor kept.  Every type without it.
 * @returns How many waiting tasks were woken.
 * @since 0.4.0
 */
export async function publishStepActivity(
  kv: KvStore,
  wake: WakeTask,
  activity: Activity,
  signer: string,
  waits?: ActivityWaitRegistry,
): Promise<number> {
  if (signer.length > MAX_MATCH_URL_LENGTH) return 0;
  const types = typeIdsOf(activity);
  if (types.length < 1) return 0;
  if (waits != null) {
    const waited = waits.waited(types);
    if (waited === false || (waited !== true && !(await waited))) return 0;
  }
  // An activity with several objects would reach a wait on each: matched
  // on its object only when it has exactly one.
  const objects = activity.objectIds;
  const object = objects.length === 1 && objects[0].href.length <= MAX_MATCH_URL_LENGTH
    ? objects[0].href
    : undefined;
  let data: string;
  try {
    data = await encodeTaskPayload(activity, { maxSize: MAX_STEP_RECORD_BYTES });
  } catch (error) {
    logger.warn(
      "The activity {activityId} is too large for a waiting step (at most {maxBytes} bytes " +
        "encoded); no waitForActivity() sees it: {error}",
      { activityId: activity.id?.href, maxBytes: MAX_STEP_RECORD_BYTES, error },
    );
    return 0;
  }
  const keys: Promise<string>[] = [];
  for (const typeId of types) {
    keys.push(matchKey(typeId, undefined, signer));
    if (object != null) {
      keys.push(matchKey(typeId, object, undefined), matchKey(typeId, object, signer));
    }
  }
  const results = await Promise.all(
    (await Promise.all(keys)).map((key) =>
      publishStepEvent(kv, wake, ACTIVITY_EVENT, key, data, DEFAULT_STEP_EVENT_WINDOW_MS)
    ),
  );
  return results.reduce((sum, result) => sum + result.resumed, 0);
}
