// The dashboard's view of a task's durable steps: GET /api/tasks/:id/steps,
// answered from the federation's getTaskSteps(), each value checked and
// bounded before it reaches the page.
import type { DashboardFederation } from "./source.ts";

const STEPS_PATH = /^\/api\/tasks\/([^/]+)\/steps$/;

/** The most steps one answer lists (a task records at most 1000). */
const MAX_LISTED_STEPS = 1000;

/** The longest step id the page shows (longer ones are cut). */
const MAX_STEP_ID_LENGTH = 200;

const STATES = new Set(["done", "sleeping", "waiting", "retrying"]);

/**
 * Whether the federation can tell a task's steps.
 * @param federation The federation.
 */
export function canShowSteps(federation: DashboardFederation): boolean {
  return typeof federation.getTaskSteps === "function";
}

/**
 * Parses a GET path under the base path as a request for a task's steps.
 * @param path The path.
 * @returns The task's id, or `undefined` when it is not one.
 */
export function matchStepsRequest(path: string): string | undefined {
  const match = STEPS_PATH.exec(path);
  if (match == null) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

function isoOf(value: unknown): string | null {
  return value instanceof Date && Number.isFinite(value.getTime()) ? value.toISOString() : null;
}

/**
 * A task's steps as JSON for the page: each step's id, kind, state and
 * times, in the order the task's code runs them, and the id of the step
 * it is at (the one not done), if any.
 * @param federation The federation (which has `getTaskSteps()`).
 * @param id The task's id.
 * @returns The JSON body.
 */
export async function taskStepsBody(
  federation: DashboardFederation,
  id: string,
): Promise<{ readonly steps: unknown[]; readonly current: string | null }> {
  const steps = (await federation.getTaskSteps!(id)).slice(0, MAX_LISTED_STEPS).map((step) => ({
    id: String(step.id).slice(0, MAX_STEP_ID_LENGTH),
    kind: String(step.kind).slice(0, 20),
    state: STATES.has(step.state) ? step.state : "unknown",
    at: isoOf(step.at),
    until: isoOf(step.until),
    failures: typeof step.failures === "number" ? step.failures : null,
    childId: typeof step.childId === "string" ? step.childId.slice(0, 100) : null,
  }));
  return { steps, current: steps.find((step) => step.state !== "done")?.id ?? null };
}
