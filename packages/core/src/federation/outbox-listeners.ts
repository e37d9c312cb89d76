// Outbox listeners: registering them, and answering a client-to-server
// POST to an actor's outbox (authorize, read within bounds, check the
// actor, call the listener for the activity's class).
import { Activity, type Recipient, Tombstone } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { readBodyCapped } from "../http/capped-body.ts";
import { parseActivityBody } from "../activitypub/inbox/parse-activity.ts";
import { findInboxListener } from "../activitypub/inbox/listeners.ts";
import { forwardActivity } from "../activitypub/outbox/send-activity.ts";
import type {
  SendActivityOptions,
  SendActivityOptionsForCollection,
  SenderIdentity,
} from "../activitypub/outbox/send-options.ts";
import { DuplicateRegistrationError, RoutePathError } from "./errors.ts";
import type { OutboxListener, OutboxListenerErrorHandler } from "./callbacks.ts";
import type { OutboxListenerSetters } from "./federatable-api.ts";
import type { FederationRegistry } from "./registry-api.ts";
import { type RequestContextHost, RequestContextImpl } from "./request-context.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { OutboxContext, RequestContext } from "./context-api.ts";

const logger = getLogger(["fedwork", "federation", "outbox"]);

/**
 * Registers the outbox listeners' path and returns their setters.
 * Internal: `Federatable.setOutboxListeners()`.
 * @throws {RoutePathError} When the path differs from the outbox
 *         dispatcher's.
 * @throws {DuplicateRegistrationError} When already registered.
 */
export function registerOutboxListeners<TContextData>(
  registry: FederationRegistry<TContextData>,
  path: string,
): OutboxListenerSetters<TContextData> {
  if (registry.outboxListenerPath != null) {
    throw new DuplicateRegistrationError("outbox listener set", "setOutboxListeners");
  }
  // The outbox collection (setOutboxDispatcher()) may have added the route.
  if (registry.outbox != null) {
    if (registry.outbox.path !== path) {
      throw new RoutePathError(
        path,
        `The path given to setOutboxListeners() must be the outbox dispatcher's, ` +
          `${JSON.stringify(registry.outbox.path)}.`,
      );
    }
  } else {
    registry.routes.add("outbox", path, "setOutboxListeners");
  }
  registry.outboxListenerPath = path;
  const setters: OutboxListenerSetters<TContextData> = {
    on(type, listener) {
      if (typeof type !== "function") {
        throw new TypeError("The first argument of on() must be an activity class, e.g. Create.");
      }
      assertFunction(listener, "on");
      if (registry.outboxListeners.has(type)) {
        throw new DuplicateRegistrationError(`outbox listener for ${type.name}`, "on");
      }
      registry.outboxListeners.set(type, listener as OutboxListener<TContextData, Activity>);
      return setters;
    },
    onError(handler) {
      assertFunction(handler, "onError");
      registry.outboxErrorHandler = handler;
      return setters;
    },
    authorize(predicate) {
      assertFunction(predicate, "authorize");
      registry.outboxAuthorize = predicate;
      return setters;
    },
  };
  return setters;
}

function assertFunction(callback: unknown, method: string): void {
  if (typeof callback !== "function") {
    throw new TypeError(`The callback given to ${method}() must be a function.`);
  }
}

/**
 * What `@fedwork/testing/app` calls on an outbox context whose
 * `sendActivity()` or `forwardActivity()` it recorded instead of sending, so
 * that the route does not warn that the listener sent nothing.  A
 * `Symbol.for()`, so the kit needs no import of it.  Internal.
 */
const DELIVERED_SEAM = Symbol.for("fedwork.testing.outboxDelivered");

/**
 * The {@link OutboxContext} implementation.  Internal.
 * @since 0.4.0
 */
export class OutboxContextImpl<TContextData> extends RequestContextImpl<TContextData>
  implements OutboxContext<TContextData> {
  readonly identifier: string;
  readonly #host: OutboxHost<TContextData>;
  readonly #activity: Readonly<Record<string, unknown>>;
  #delivered = false;

  constructor(
    host: OutboxHost<TContextData>,
    request: Request,
    data: TContextData,
    identifier: string,
    activity: Readonly<Record<string, unknown>>,
  ) {
    super(host, request, data);
    this.#host = host;
    this.identifier = identifier;
    this.#activity = activity;
  }

  override clone(data: TContextData): OutboxContextImpl<TContextData> {
    return new OutboxContextImpl(this.#host, this.request, data, this.identifier, this.#activity);
  }

  hasDeliveredActivity(): boolean {
    return this.#delivered;
  }

  /** The testing kit's seam: see {@link DELIVERED_SEAM}. */
  [DELIVERED_SEAM](): void {
    this.#delivered = true;
  }

  override async sendActivity(
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options?: SendActivityOptionsForCollection,
  ): Promise<void> {
    await super.sendActivity(sender, recipients, activity, options);
    this.#delivered = true;
  }

  async forwardActivity(
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    options: SendActivityOptions = {},
  ): Promise<void> {
    await forwardActivity(this.#host.outbox, this, forwarder, recipients, this.#activity, options);
    this.#delivered = true;
  }
}

/** What answering an outbox POST needs of the federation. */
export interface OutboxHost<TContextData> extends RequestContextHost<TContextData> {
  readonly registry: FederationRegistry<TContextData>;
  readonly options: ResolvedFederationOptions;
}

function text(body: string, status: number): Response {
  return new Response(body, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  });
}

async function reportError<TContextData>(
  handler: OutboxListenerErrorHandler<TContextData> | undefined,
  ctx: OutboxContext<TContextData>,
  error: Error,
): Promise<void> {
  try {
    await handler?.(ctx, error);
  } catch (thrown) {
    logger.error("The outbox error handler threw: {message}", {
      identifier: ctx.identifier,
      message: thrown instanceof Error ? thrown.message : String(thrown),
    });
  }
}

/**
 * Answers a POST to an actor's outbox, as Fedify does: 401 (or
 * `onUnauthorized`) when `authorize()` refuses it, 404 for an unknown
 * actor, 413 for a body over `inboxMaxBytes`, 400 for a body that is no
 * activity or one whose actor is not the outbox's owner, 500 when the
 * listener throws, and 202 otherwise (also when no listener handles the
 * type).  Internal.
 * @param host The federation.
 * @param ctx The request's context.
 * @param identifier The outbox owner's identifier.
 * @param fallbacks The fetch options' 404 and 401 answers.
 * @returns The response.
 */
export async function handleOutboxPost<TContextData>(
  host: OutboxHost<TContextData>,
  ctx: RequestContext<TContextData>,
  identifier: string,
  fallbacks: {
    readonly onNotFound: (request: Request) => Response | Promise<Response>;
    readonly onUnauthorized: (request: Request) => Response | Promise<Response>;
  },
): Promise<Response> {
  const { registry, options } = host;
  const { request } = ctx;
  const authorize = registry.outboxAuthorize;
  if (authorize != null && !await authorize(ctx, identifier)) {
    return await fallbacks.onUnauthorized(request);
  }
  const actor = registry.actor == null ? null : await registry.actor.dispatcher(ctx, identifier);
  if (actor == null || actor instanceof Tombstone) return await fallbacks.onNotFound(request);
  const read = await readBodyCapped(request, options.inboxMaxBytes).catch(() => null);
  if (read == null) return text("The body could not be read.", 400);
  if (read.truncated) return text(`The body exceeds ${options.inboxMaxBytes} bytes.`, 413);
  const parsed = parseActivityBody(read.body, options.remoteDocuments.limits);
  const errorHandler = registry.outboxErrorHandler;
  if (!parsed.ok) {
    await reportError(
      errorHandler,
      new OutboxContextImpl(host, request, ctx.data, identifier, {}),
      new TypeError(parsed.message),
    );
    return text(parsed.message, 400);
  }
  const outboxCtx = new OutboxContextImpl(host, request, ctx.data, identifier, parsed.activity);
  let activity: Activity;
  try {
    activity = await Activity.fromJsonLd(parsed.activity, {
      documentLoader: ctx.documentLoader,
      contextLoader: ctx.documentLoader,
    });
  } catch (error) {
    await reportError(errorHandler, outboxCtx, error as Error);
    return text("Invalid activity.", 400);
  }
  const owner = (actor.id ?? ctx.getActorUri(identifier)).href;
  const actors = activity.actorIds.map((id) => id.href);
  if (actors.length === 0 || actors.some((id) => id !== owner)) {
    const error = new TypeError(
      actors.length === 0
        ? "The posted activity has no actor."
        : "The activity's actor is not the outbox's owner.",
    );
    await reportError(errorHandler, outboxCtx, error);
    return text(error.message, 400);
  }
  const listener = findInboxListener(registry.outboxListeners, activity);
  if (listener == null) {
    logger.debug("No outbox listener for {activityType}.", {
      identifier,
      activityId: activity.id?.href,
      activityType: activity.constructor.name,
    });
    return text("", 202);
  }
  try {
    await listener(outboxCtx, activity);
  } catch (error) {
    await reportError(errorHandler, outboxCtx, error as Error);
    logger.error("The outbox listener for {activityType} threw: {message}", {
      identifier,
      activityId: activity.id?.href,
      activityType: activity.constructor.name,
      message: error instanceof Error ? error.message : String(error),
    });
    return text("Internal server error.", 500);
  }
  if (!outboxCtx.hasDeliveredActivity()) {
    logger.warn(
      "The outbox listener for {identifier} returned without sending or forwarding the " +
        "posted activity {activityId}.",
      { identifier, activityId: activity.id?.href },
    );
  }
  return text("", 202);
}
