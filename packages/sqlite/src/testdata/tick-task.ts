// The payload schema of the "tick" task shared by scheduled-tasks.test.ts
// and its worker processes: a hand-written Standard Schema, so that the
// package needs no schema library.
export const tickSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "fedwork-sqlite-test",
    validate: (value: unknown) =>
      typeof value === "object" && value != null
        ? { value: value as Record<string, never> }
        : { issues: [{ message: "Expected an object." }] },
  },
};
