import type { StandardSchemaV1 } from "@standard-schema/spec";
import { TaskValidationError } from "./errors.ts";

/**
 * Validates a task payload against the task's schema (which may validate
 * asynchronously).
 * @param task The task: its name (for the error) and its schema.
 * @param value The payload.
 * @returns The schema's output for the payload (which differs from the
 *          payload when the schema transforms it).
 * @throws {TaskValidationError} (as a rejection) When the schema reports
 *         issues; the error lists each issue's path and message.
 * @since 0.1.0
 */
export async function validateTaskPayload<TOutput = unknown>(
  task: { readonly name: string; readonly schema: StandardSchemaV1<unknown, TOutput> },
  value: unknown,
): Promise<TOutput> {
  // validate() may return a promise (async refinements), so always await.
  const result = await task.schema["~standard"].validate(value);
  if (result.issues != null) throw new TaskValidationError(task.name, result.issues);
  return result.value;
}
