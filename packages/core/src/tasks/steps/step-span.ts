// The span of a durable step that does something in a run.
import { type Span, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { RunPostponedError } from "../../processing/run-postponed.ts";
import type { TaskMessage } from "../message.ts";
import type { StepKind } from "./state.ts";

/**
 * Runs a step's work in a `fedwork.task.step` span (a step replayed from
 * its record gets none): its outcome is `recorded`, `suspended` (a sleep
 * or wait ended the run) or `failed`.  Without a tracer, runs it bare.
 * Internal.
 * @param tracer The tracer, if any.
 * @param id The step's id.
 * @param kind The step's kind.
 * @param message The run's message.
 * @param body The step's work.
 * @returns What the work returned.
 * @since 0.4.0
 */
export function tracedStep<T>(
  tracer: Tracer | undefined,
  id: string,
  kind: StepKind,
  message: TaskMessage,
  body: () => Promise<T>,
): Promise<T> {
  if (tracer == null) return body();
  return tracer.startActiveSpan("fedwork.task.step", {
    kind: SpanKind.INTERNAL,
    attributes: {
      "fedwork.step.id": id,
      "fedwork.step.kind": kind,
      "fedwork.task.name": message.taskName,
      "fedwork.message.id": message.id,
      "fedwork.message.attempt": message.attempt,
    },
  }, async (span: Span) => {
    try {
      const value = await body();
      span.setAttribute("fedwork.step.outcome", "recorded");
      return value;
    } catch (error) {
      if (error instanceof RunPostponedError) {
        span.setAttribute("fedwork.step.outcome", "suspended");
      } else {
        span.setAttribute("fedwork.step.outcome", "failed");
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}
