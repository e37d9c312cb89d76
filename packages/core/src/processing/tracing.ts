import {
  type Context as OtelContext,
  context,
  INVALID_TRACEID,
  isSpanContextValid,
  type Span,
  type SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { FEDWORK_VERSION } from "../http/user-agent.ts";

/** The instrumentation scope name of Fedwork's spans. */
const TRACER_NAME = "@fedwork/core";
const TRACER_VERSION = FEDWORK_VERSION;

// A fixed propagator rather than the global one: trace context in queue
// messages must use the same format whichever propagator the app installs.
const propagator = new W3CTraceContextPropagator();

/**
 * Gets Fedwork's tracer from a provider.
 * @param provider The tracer provider.
 * @returns The tracer.
 * @since 0.1.0
 */
export function getFedworkTracer(provider: TracerProvider): Tracer {
  return provider.getTracer(TRACER_NAME, TRACER_VERSION);
}

/**
 * Serializes the span context of `ctx` as W3C trace context headers.
 * @param ctx The OpenTelemetry context holding the span.
 * @returns `traceparent` (and `tracestate`), or `{}` without a sampled span.
 * @since 0.1.0
 */
export function injectTraceContext(ctx: OtelContext): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, {
    set(target, key, value) {
      target[key] = value;
    },
  });
  return carrier;
}

/**
 * Restores an OpenTelemetry context from W3C trace context headers.
 * @param carrier The headers written by {@link injectTraceContext}.
 * @returns A context whose span is the remote parent (or the root context).
 * @since 0.1.0
 */
export function extractTraceContext(
  carrier: Readonly<Record<string, string>> | undefined,
): OtelContext {
  // Most messages carry no trace context (no tracer was recording when they
  // were enqueued): skip the propagator's work for them.
  if (carrier == null || carrier.traceparent == null) return context.active();
  return propagator.extract(context.active(), carrier, {
    get: (source, key) => source[key],
    keys: (source) => Object.keys(source),
  });
}

/**
 * Runs `fn` inside a new active span, ending it afterwards and recording a
 * thrown error on it.
 * @param tracer The tracer.
 * @param name The span name.
 * @param options The span kind, attributes and parent context.
 * @param fn The work; receives the span.
 * @returns What `fn` returns.
 * @since 0.1.0
 */
export function withSpan<T>(
  tracer: Tracer,
  name: string,
  options: {
    readonly kind: SpanKind;
    readonly attributes?: Record<string, string | number | boolean>;
    readonly parent?: OtelContext;
  },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  // Chained with then() rather than written as async functions: this runs
  // once per message, and each async layer costs promises and turns.
  try {
    const active = context.active();
    const parent = options.parent ?? active;
    const span = tracer.startSpan(
      name,
      { kind: options.kind, attributes: options.attributes },
      parent,
    );
    // A span nothing records and no trace to pass on (no tracer provider
    // registered, the usual case): `fn` runs in the context it would see
    // anyway, without one made for the span.  This is on every message's
    // path.
    if (parent === active && !span.isRecording() && !hasTraceContext(span)) {
      // Nor anything to end or record on: a span that is not recording
      // ignores both, as the OpenTelemetry API specifies.
      return fn(span);
    }
    return context.with(trace.setSpan(parent, span), settleInSpan<T>, undefined, span, fn);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Whether a span has a trace context to pass on (a valid span context).
 * The span of the no-op tracer, on every message's path when no tracer
 * provider is registered, is told apart by its trace id alone, without
 * the hexadecimal checks of `isSpanContextValid()`.
 * @param span The span, ended or not.
 * @returns `true` when its trace context is valid.
 * @since 0.3.0
 */
export function hasTraceContext(span: Span): boolean {
  const spanContext = span.spanContext();
  return spanContext.traceId !== INVALID_TRACEID && isSpanContextValid(spanContext);
}

/** Runs `fn`, then ends `span`, recording on it what `fn` threw. */
function settleInSpan<T>(span: Span, fn: (span: Span) => Promise<T>): Promise<T> {
  let running: Promise<T>;
  try {
    running = fn(span);
  } catch (error) {
    failSpan(span, error);
    return Promise.reject(error);
  }
  return running.then((value) => {
    span.end();
    return value;
  }, (error) => {
    failSpan(span, error);
    throw error;
  });
}

/** Records an error on a span and ends it. */
function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
  span.end();
}

/**
 * The trace context to store in a message enqueued while `span` is active.
 * @param span The enqueuing span.
 * @returns The W3C trace context headers.
 * @since 0.1.0
 */
export function traceContextOf(span: Span): Record<string, string> {
  // The usual case (no tracer provider, or a span context not to pass on):
  // what the propagator would write is nothing, without a context made for
  // it and the hexadecimal checks of its span context.
  if (!hasTraceContext(span)) return {};
  return injectTraceContext(trace.setSpan(context.active(), span));
}
