import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertMatch, assertRejects, deferred, test, within } from "@fedify/fixture";
import { openBackends } from "./backends.ts";

test("QUEUE_CONCURRENCY lets a worker process run that many handlers at once", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "microblog-backends-"));
  try {
    await using backends = await openBackends({
      dataDir,
      instance: "concurrency",
      env: { QUEUE_CONCURRENCY: "3", QUEUE_PREFETCH: "0" },
      pollIntervalMs: 50,
    });
    const controller = new AbortController();
    const running = new Set<unknown>();
    const allRunning = deferred<void>();
    const release = deferred<void>();
    const listening = backends.queue.listen(async (message) => {
      running.add(message);
      if (running.size === 3) allRunning.resolve();
      await release.promise;
    }, { signal: controller.signal });
    try {
      for (const n of [1, 2, 3]) await backends.queue.enqueue(n);
      // With the default concurrency of 1, the second handler would never
      // start while the first waits.
      await within(allRunning.promise, "three handlers running at once", 30_000);
    } finally {
      release.resolve();
      controller.abort();
      await listening;
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test("QUEUE_CONCURRENCY and QUEUE_PREFETCH that are not whole numbers are refused, naming the variable", async () => {
  for (
    const [env, message] of [
      [{ QUEUE_CONCURRENCY: "0" }, /QUEUE_CONCURRENCY must be a whole number ≥ 1; got "0"/],
      [{ QUEUE_CONCURRENCY: "eight" }, /QUEUE_CONCURRENCY must be a whole number ≥ 1/],
      [{ QUEUE_PREFETCH: "1.5" }, /QUEUE_PREFETCH must be a whole number ≥ 0; got "1.5"/],
    ] as const
  ) {
    const error = await assertRejects(
      () => openBackends({ dataDir: tmpdir(), instance: "refused", env }),
      RangeError,
    );
    assertMatch(error.message, message);
  }
});
