// A node:test reporter that counts top-level tests only, so that Node.js
// reports the same number of tests as Deno (whose summary counts steps
// apart) and Bun (whose runner has no nested tests).  scripts/test.ts reads
// the one JSON line it writes.
interface TestEvent {
  readonly type: string;
  readonly data: { readonly nesting?: number; readonly skip?: unknown; readonly todo?: unknown };
}

export default async function* summaryReporter(
  source: AsyncIterable<TestEvent>,
): AsyncGenerator<string> {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.data?.nesting !== 0) continue;
    if (event.type === "test:pass") {
      if (event.data.skip !== undefined || event.data.todo !== undefined) skipped++;
      else passed++;
    } else if (event.type === "test:fail") {
      failed++;
    }
  }
  yield `${JSON.stringify({ passed, failed, skipped })}\n`;
}
