// postOutboxActivity(): an activity POSTed to a local actor's outbox through
// the federation's real outbox route, with the route's refusals turned into
// errors a test reads, and the listener's own error rethrown.
import { Activity } from "@fedify/vocab";
import { type Federation, RouteNotRegisteredError } from "@fedwork/core";
import type { PostOutboxActivityOptions } from "./types.ts";

/** What posting needs of the test federation.  Internal. */
export interface OutboxPostHost<TContextData> {
  readonly real: Federation<TContextData>;
  readonly origin: URL;
  readonly contextData: TContextData | undefined;
  /** Starts collecting what callbacks throw; the returned function stops. */
  captureCallbackErrors(): () => unknown[];
}

/**
 * Posts `activity` to the outbox of `identifier`.  Internal:
 * `MockFederation.postOutboxActivity()`.
 * @param host The test federation.
 * @param identifier The outbox owner.
 * @param activity The activity.
 * @param options The POST's headers.
 * @throws {TypeError} When `activity` is not an `Activity` or an option is
 *         malformed.
 * @throws {Error} When the outbox refuses the POST.
 * @throws What the listener throws.
 * @since 0.4.0
 */
export async function postOutboxActivity<TContextData>(
  host: OutboxPostHost<TContextData>,
  identifier: string,
  activity: Activity,
  options: PostOutboxActivityOptions = {},
): Promise<void> {
  if (!(activity instanceof Activity)) {
    throw new TypeError(
      "postOutboxActivity() takes an Activity from @fedify/vocab (e.g. a Create).",
    );
  }
  if (typeof identifier !== "string") {
    throw new TypeError("The identifier given to postOutboxActivity() must be a string.");
  }
  if (typeof options !== "object" || options == null) {
    throw new TypeError("The options of postOutboxActivity() must be an object.");
  }
  const ctx = host.real.createContext(host.origin, host.contextData as TContextData);
  let outbox: URL;
  try {
    outbox = ctx.getOutboxUri(identifier);
  } catch (error) {
    if (!(error instanceof RouteNotRegisteredError)) throw error;
    throw new Error(
      "postOutboxActivity(): no outbox route is registered; register the listeners with " +
        "setOutboxListeners().",
    );
  }
  const headers = new Headers(options.headers);
  headers.set("content-type", "application/activity+json");
  const request = new Request(outbox, {
    method: "POST",
    headers,
    body: JSON.stringify(await activity.toJsonLd()),
  });
  const stop = host.captureCallbackErrors();
  let errors: unknown[] = [];
  let response: Response;
  try {
    response = await host.real.fetch(request, { contextData: host.contextData as TContextData });
  } finally {
    errors = stop();
  }
  if (response.status === 202) return;
  const body = (await response.text()).slice(0, 500);
  const where = `postOutboxActivity(): the outbox of ${JSON.stringify(identifier)}`;
  switch (response.status) {
    case 500:
      // The listener's own error, as Fedify's mock rethrows it.
      if (errors.length > 0) throw errors.at(-1);
      break;
    case 401:
      throw new Error(
        `${where} refused the POST as unauthorized (401); give the headers option the ` +
          "credentials its authorize() checks.",
      );
    case 404:
      throw new Error(`${where} has no actor (404): the actor dispatcher returned none.`);
    case 405:
      throw new Error(
        `${where} takes no POST (405); register the listeners with setOutboxListeners().`,
      );
  }
  throw new Error(`${where} refused the activity (${response.status}): ${body}`);
}
