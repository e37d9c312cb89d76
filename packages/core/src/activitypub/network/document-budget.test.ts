import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import type { DocumentLoader } from "@fedify/vocab";
import {
  DocumentLoadBudgetError,
  withDocumentLimits,
  withDocumentLoadBudget,
} from "./document-budget.ts";
import { DocumentTooComplexError } from "./document-complexity.ts";
import { RemoteTimeoutError } from "./errors.ts";
import { contextBomb } from "./testdata/hostile-documents.ts";

const AS = "https://www.w3.org/ns/activitystreams";

/** A loader that never answers and ignores its signal, counting its calls. */
function tarpit(calls: string[]): DocumentLoader {
  return (url) => {
    calls.push(url);
    return new Promise(() => {});
  };
}

test("the loads of one document share one time budget, whatever the loader does", async () => {
  const calls: string[] = [];
  const budgeted = withDocumentLoadBudget(tarpit(calls), { timeoutMs: 100 });
  await assertRejects(() => budgeted("https://slow.example/a"), RemoteTimeoutError);
  // The budget is spent: the next load is refused without being made.
  await assertRejects(() => budgeted("https://slow.example/b"), RemoteTimeoutError);
  assertEquals(calls, ["https://slow.example/a"]);
});

test("a document load budget counts loads, but not the bundled contexts", async () => {
  const calls: string[] = [];
  const loader: DocumentLoader = (url) => {
    calls.push(url);
    return Promise.resolve({ documentUrl: url, document: { id: url }, contextUrl: null });
  };
  const budgeted = withDocumentLoadBudget(loader, { maxLoads: 2 });
  await budgeted(AS);
  await budgeted("https://remote.example/1");
  await budgeted("https://remote.example/2");
  await assertRejects(() => budgeted("https://remote.example/3"), DocumentLoadBudgetError);
  assertEquals(calls, ["https://remote.example/1", "https://remote.example/2"]);
});

test("a budgeted load aborts with the caller's signal", async () => {
  const controller = new AbortController();
  const budgeted = withDocumentLoadBudget(tarpit([]), { signal: controller.signal });
  const loading = budgeted("https://slow.example/a");
  controller.abort(new Error("stopped"));
  await assertRejects(() => loading, Error, "stopped");
});

test("loaded documents past the document limits are refused, the bundled contexts trusted", async () => {
  const loader: DocumentLoader = (url) =>
    Promise.resolve({
      documentUrl: url,
      document: url === AS ? contextBomb(100) : contextBomb(12_000),
      contextUrl: null,
    });
  for (const wrapped of [withDocumentLimits(loader), withDocumentLoadBudget(loader)]) {
    const error = await assertRejects(
      () => wrapped("https://attacker.example/bomb"),
      DocumentTooComplexError,
    );
    assertEquals(error.limit, "maxContextEntries");
    assert(error.message.includes("https://attacker.example/bomb"));
  }
  // The application's loader still serves a bundled context its own way.
  assertEquals((await withDocumentLimits(loader)(AS)).documentUrl, AS);
});
