// The payload schema of the "hold" task of held-task-worker.ts and the
// processes that enqueue it: a hand-written Standard Schema, so that the
// package needs no schema library.
export const holdSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "fedwork-sqlite-test",
    validate: (value: unknown) =>
      typeof value === "object" && value != null
        ? { value: value as { readonly label?: string } }
        : { issues: [{ message: "Expected an object." }] },
  },
};
