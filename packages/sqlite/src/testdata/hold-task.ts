// The payload schema of the "hold" task of held-task-worker.ts and the
// processes that enqueue it: a hand-written Standard Schema, so that the
// package needs no schema library.

/** The payload: a label to tell runs apart. */
export interface HoldPayload {
  readonly label?: string;
}

export const holdSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "fedwork-sqlite-test",
    validate: (value: unknown) =>
      typeof value === "object" && value != null
        ? { value: value as HoldPayload }
        : { issues: [{ message: "Expected an object." }] },
    types: undefined as unknown as { readonly input: HoldPayload; readonly output: HoldPayload },
  },
};
