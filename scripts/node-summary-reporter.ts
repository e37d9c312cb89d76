// A node:test reporter that counts top-level tests only, so that Node.js
// reports the same number of tests as Deno (whose summary counts steps
// apart) and Bun (whose runner has no nested tests).  scripts/test.ts reads
// the one JSON line it writes.
import { resolve } from "node:path";

interface TestEvent {
  readonly type: string;
  readonly data: {
    readonly nesting?: number;
    readonly skip?: unknown;
    readonly todo?: unknown;
    readonly name?: string;
    readonly file?: string;
  };
}

export default async function* summaryReporter(
  source: AsyncIterable<TestEvent>,
): AsyncGenerator<string> {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.data?.nesting !== 0) continue;
    // A file none of whose tests ran (a --test-name-pattern left them all
    // out) is reported as a passing test named after the file; Deno and Bun
    // count nothing for it.
    // (A file that fails to load is reported the same way, as a failure,
    // which must count.)
    const isFile = event.data.file != null && resolve(event.data.name ?? "") === event.data.file;
    if (isFile && event.type === "test:pass") continue;
    if (event.type === "test:pass") {
      if (event.data.skip !== undefined || event.data.todo !== undefined) skipped++;
      else passed++;
    } else if (event.type === "test:fail") {
      failed++;
    }
  }
  yield `${JSON.stringify({ passed, failed, skipped })}\n`;
}
