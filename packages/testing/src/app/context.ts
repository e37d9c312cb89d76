// How the kit sees the federation and its contexts: proxies.  The
// federation's proxy adds the kit's members and wraps every callback an
// application registers (dispatchers, inbox listeners, task handlers), so
// that the contexts those callbacks receive are test contexts too: their
// sendActivity() records the activity, on the context and the federation,
// instead of signing and delivering it.
import { Activity, type Recipient } from "@fedify/vocab";
import type { Federation, SendActivityOptions, SenderIdentity } from "@fedwork/core";
import type { ContextSentActivity, MockFederation, SentActivity } from "./types.ts";

/** What the recorder needs from the federation's state.  Internal. */
export interface RecorderHost<TContextData> {
  readonly proxy: MockFederation<TContextData>;
  sentActivities: SentActivity[];
  sentCounter: number;
  readonly queueStarted: boolean;
  /** Told of what an application callback throws, before it is rethrown. */
  callbackFailed?(error: unknown): void;
}

/** What {@link ContextRecorder.wrapContext} adds to a context.  Internal. */
export interface ContextOverlay {
  /** Members beyond the real context's, by name. */
  readonly members?: Readonly<Record<string, unknown>>;
  /**
   * The listener context it stands for: both have `forwardActivity()`, an
   * outbox context `hasDeliveredActivity()` too.
   */
  readonly kind?: "inbox" | "outbox";
  /** The activity the context's listener received. */
  readonly received?: Activity;
}

/** What a test context keeps. */
interface ContextState {
  readonly records: ContextSentActivity[];
  delivered: boolean;
  received: Activity | undefined;
}

// deno-lint-ignore no-explicit-any
type AnyFunction = (...args: any[]) => unknown;

/** Getters for the members the kit adds to the federation. */
export type FederationExtras = Record<string, () => unknown>;

/**
 * Wraps the federation, its setters, callbacks and contexts.  Internal.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export class ContextRecorder<TContextData> {
  readonly #host: RecorderHost<TContextData>;
  readonly #contexts = new WeakMap<object, object>();
  readonly #wrapped = new WeakSet<object>();
  readonly #states = new WeakMap<object, ContextState>();

  constructor(host: RecorderHost<TContextData>) {
    this.#host = host;
  }

  /**
   * The federation as tests see it.
   * @param real The real federation.
   * @param extras The kit's members, by name.
   * @returns The proxy.
   */
  wrapFederation(
    real: Federation<TContextData>,
    extras: FederationExtras,
  ): MockFederation<TContextData> {
    return new Proxy(real, {
      get: (target, property) => {
        if (typeof property === "string" && Object.hasOwn(extras, property)) {
          return extras[property]();
        }
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "createContext") {
          return (base: URL | Request, data: TContextData) =>
            this.wrapContext(target.createContext(base as URL, data));
        }
        if (property === "defineTask") {
          return (name: string, options: unknown) =>
            target.defineTask(name, this.#wrapTaskOptions(options) as never);
        }
        if (typeof property === "string" && property.startsWith("set")) {
          return (...args: unknown[]) =>
            this.#wrapSetters(value.apply(target, this.#wrapArgs(args)), target);
        }
        return value.bind(target);
      },
      // Fedify's mock has sentActivities as a plain field a test may
      // replace; the other members of the kit are read-only.
      set: (target, property, value) => {
        if (property === "sentActivities" && Array.isArray(value)) {
          this.#host.sentActivities = value;
          return true;
        }
        if (typeof property === "string" && Object.hasOwn(extras, property)) return false;
        return Reflect.set(target, property, value, target);
      },
      has: (target, property) => {
        return (typeof property === "string" && Object.hasOwn(extras, property)) ||
          Reflect.has(target, property);
      },
    }) as unknown as MockFederation<TContextData>;
  }

  /**
   * A context as tests see it; the same proxy each time for one context.
   * @param ctx A real context.
   * @param overlay Members the test context has beyond the real one's
   *                (`recipient`, `identifier`, …: the standalone inbox and
   *                outbox contexts), and the activity it received.
   * @returns The test context.
   */
  wrapContext<T extends object>(ctx: T, overlay: ContextOverlay = {}): T {
    if (this.#wrapped.has(ctx)) return ctx;
    const known = this.#contexts.get(ctx);
    if (known != null) return known as T;
    const state: ContextState = { records: [], delivered: false, received: overlay.received };
    const members = overlay.members ?? {};
    const kind = overlay.kind;
    const has = (name: string) =>
      name in ctx || (kind != null && (name === "forwardActivity" || kind === "outbox"));
    const proxy = new Proxy(ctx, {
      get: (target, property) => {
        switch (property) {
          case "sendActivity":
            return async (
              sender: SenderIdentity,
              recipients: Recipient | readonly Recipient[] | "followers",
              activity: Activity,
              options?: SendActivityOptions & { readonly rawActivity?: unknown },
            ) => {
              await this.#record(state.records, sender, recipients, activity, options);
              state.delivered = true;
              markDelivered(target);
            };
          case "forwardActivity":
            if (!has(property)) break;
            return (
              forwarder: SenderIdentity,
              recipients: Recipient | readonly Recipient[] | "followers",
            ) => this.#forward(state, forwarder, recipients).then(() => markDelivered(target));
          case "hasDeliveredActivity":
            if (!has(property)) break;
            return () => state.delivered;
          case "getSentActivities":
            return () => [...state.records];
          case "reset":
            return () => void (state.records.length = 0);
          case "federation":
            return this.#host.proxy;
          case "clone":
            return (data: TContextData) =>
              this.wrapContext(
                (target as { clone(data: TContextData): object }).clone(data),
                { members, kind, received: state.received },
              );
        }
        if (typeof property === "string" && Object.hasOwn(members, property)) {
          return members[property];
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
      has: (target, property) =>
        typeof property === "string" && (Object.hasOwn(members, property) || has(property)) ||
        Reflect.has(target, property),
    });
    this.#contexts.set(ctx, proxy);
    this.#wrapped.add(proxy);
    this.#states.set(proxy, state);
    return proxy;
  }

  // A listener's forwardActivity() sends the activity it received, as it
  // was received: recorded with that activity and its JSON-LD.
  async #forward(
    state: ContextState,
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
  ): Promise<void> {
    const received = state.received;
    if (received == null) {
      throw new TypeError(
        "This context has received no activity to forward; give createInboxContext() or " +
          "createOutboxContext() the activity option.",
      );
    }
    if (recipients == null) {
      throw new TypeError("The recipients given to forwardActivity() must be given.");
    }
    const rawActivity = await received.toJsonLd();
    await this.#record(state.records, forwarder, recipients, received, { rawActivity }, true);
    state.delivered = true;
  }

  async #record(
    records: ContextSentActivity[],
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options?: { readonly rawActivity?: unknown },
    forwarded = false,
  ): Promise<void> {
    const method = forwarded ? "forwardActivity()" : "sendActivity()";
    // The checks production makes before anything is sent.
    if (
      typeof sender !== "object" || sender == null ||
      typeof (sender as { identifier?: unknown }).identifier !== "string"
    ) {
      throw new TypeError(
        `The ${
          forwarded ? "forwarder" : "sender"
        } given to ${method} must be { identifier: string } naming one of your actors.`,
      );
    }
    if (!(activity instanceof Activity)) {
      throw new TypeError(
        `The activity given to ${method} must be an Activity from @fedify/vocab (e.g. a Create).`,
      );
    }
    if (activity.actorId == null) {
      throw new TypeError(`The activity given to ${method} must have an actor.`);
    }
    // Production serializes it; what cannot be serialized fails here too.
    await activity.toJsonLd();
    const raw = options?.rawActivity === undefined ? {} : { rawActivity: options.rawActivity };
    const flag = forwarded ? { forwarded: true } : {};
    records.push({ sender, recipients, activity, ...raw, ...flag });
    const host = this.#host;
    const queued = host.queueStarted;
    host.sentActivities.push({
      queued,
      ...(queued ? { queue: "outbox" as const } : {}),
      activity,
      ...raw,
      sentOrder: ++host.sentCounter,
      sender,
      recipients,
      ...flag,
    });
  }

  #wrapTaskOptions(options: unknown): unknown {
    if (typeof options !== "object" || options == null) return options;
    const wrapped: Record<string, unknown> = { ...options };
    for (const name of ["handler", "onError"]) {
      const callback = wrapped[name];
      if (isFunction(callback)) wrapped[name] = this.#wrapCallback(callback);
    }
    return wrapped;
  }

  #wrapArgs(args: unknown[]): unknown[] {
    return args.map((arg) => isFunction(arg) && !isClass(arg) ? this.#wrapCallback(arg) : arg);
  }

  #wrapCallback(callback: AnyFunction): (...args: unknown[]) => unknown {
    const wrap = (arg: unknown) => isContext(arg) ? this.wrapContext(arg) : arg;
    const states = this.#states;
    const host = this.#host;
    const failed = (error: unknown) => {
      host.callbackFailed?.(error);
      throw error;
    };
    return function (this: unknown, ...args: unknown[]) {
      const wrapped = args.map(wrap);
      // A listener's (ctx, activity): what its forwardActivity() forwards.
      const state = states.get(wrapped[0] as object);
      if (state != null && wrapped[1] instanceof Activity) state.received ??= wrapped[1];
      let result: unknown;
      try {
        result = Reflect.apply(callback, this, wrapped);
      } catch (error) {
        failed(error);
      }
      return result instanceof Promise ? result.catch(failed) : result;
    };
  }

  // Setters chain (`.on(Follow, …).on(Undo, …)`): each call returns the
  // setters, which must stay wrapped so that later callbacks are too.
  #wrapSetters(setters: unknown, federation: object): unknown {
    if (setters === federation) return this.#host.proxy;
    if (typeof setters !== "object" || setters == null) return setters;
    const proxy: object = new Proxy(setters, {
      get: (target, property) => {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result = value.apply(target, this.#wrapArgs(args));
          if (result === target) return proxy;
          if (result === federation) return this.#host.proxy;
          return result;
        };
      },
    });
    return proxy;
  }
}

/**
 * Tells a real outbox context that what its listener sent was recorded, so
 * that the outbox route does not warn that the listener sent nothing (the
 * seam is `Symbol.for("fedwork.testing.outboxDelivered")` in
 * `@fedwork/core`'s outbox listeners; other contexts lack it).
 */
function markDelivered(ctx: object): void {
  const seam = (ctx as Record<symbol, unknown>)[Symbol.for("fedwork.testing.outboxDelivered")];
  if (typeof seam === "function") seam.call(ctx);
}

function isFunction(value: unknown): value is AnyFunction {
  return typeof value === "function";
}

function isClass(value: AnyFunction): boolean {
  return "typeId" in value || /^class\b/.test(Function.prototype.toString.call(value));
}

function isContext(value: unknown): value is object {
  return typeof value === "object" && value != null &&
    typeof (value as { sendActivity?: unknown }).sendActivity === "function" &&
    typeof (value as { getActorUri?: unknown }).getActorUri === "function";
}
