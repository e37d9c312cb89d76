// The one-time console hint for a ported Fedify application whose LogTape
// configuration names "fedify" but not "fedwork".
import { assertEquals, assertMatch, test } from "@fedify/fixture";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation } from "./federation.ts";
import { resetFedifyLogCategoryHint } from "./log-category-hint.ts";

/** Runs `fn` with LogTape configured for `categories`, collecting console warnings. */
async function withConsoleWarnings(
  categories: readonly (string | string[])[] | null,
  fn: () => unknown,
): Promise<string[]> {
  const warnings: string[] = [];
  const original = console.warn;
  resetFedifyLogCategoryHint();
  if (categories != null) {
    await configure({
      sinks: { none: (_record: LogRecord) => {} },
      loggers: [
        ...categories.map((category) => ({ category, sinks: ["none" as const] })),
        { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" as const },
      ],
      reset: true,
    });
  }
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
  try {
    await fn();
  } finally {
    console.warn = original;
    await reset();
    resetFedifyLogCategoryHint();
  }
  return warnings;
}

const federation = () => createFederation<void>({ kv: new MemoryKvStore() });

test('a federation hints once when LogTape has a "fedify" logger and no "fedwork" one', async () => {
  const warnings = await withConsoleWarnings(["fedify"], () => {
    federation();
    federation();
  });
  assertEquals(warnings.length, 1);
  assertMatch(warnings[0], /\["fedwork"\], not \["fedify"\]/);
  assertMatch(warnings[0], /category: \["fedwork"\]/);
});

test('no hint when LogTape has a "fedwork" or a root logger, or is not configured', async () => {
  assertEquals(await withConsoleWarnings([["fedify"], ["fedwork"]], federation), []);
  assertEquals(await withConsoleWarnings(["fedify", []], federation), []);
  assertEquals(await withConsoleWarnings(["my-app"], federation), []);
  assertEquals(await withConsoleWarnings(null, federation), []);
});

test("LogTape configured after the federation is made gets the hint at its first request", async () => {
  resetFedifyLogCategoryHint();
  const made = federation();
  const warnings = await withConsoleWarnings(["fedify", "my-app"], async () => {
    const response = await made.fetch(new Request("https://app.example/nothing"), {
      contextData: undefined,
    });
    await response.body?.cancel();
  });
  assertEquals(warnings.length, 1);
});
