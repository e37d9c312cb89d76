// The many-workers soak at a short size: three worker processes on one
// RedisMessageQueue, one SIGKILLed and replaced every 1.5 seconds while
// producers enqueue.  Nothing may be lost, and a task handled twice must
// have been completed by a worker that was killed (at least once delivery:
// its acknowledgement died with it).  bench/soak.ts runs longer sizes.
import { assert, assertEquals, test } from "@fedify/fixture";
import { runQueueSoak } from "@fedwork/testing";

test("RedisMessageQueue loses no task with three workers SIGKILLed at random", async () => {
  const report = await runQueueSoak({
    factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
    workers: 3,
    tasks: 4000,
    killEveryMs: 1500,
    // Long enough that a live worker's heartbeat renews its lease even on a
    // loaded machine (the suite runs files side by side on 2 cores); with
    // 2 s, a starved worker lost leases it still held and the tasks ran twice
    // with no kill to explain it.
    leaseMs: 5000,
    handlerMs: 2,
  });
  const summary = JSON.stringify(report);
  assertEquals(report.lost, 0, `lost tasks: ${summary}`);
  assertEquals(report.unexplainedDuplicates, 0, `duplicates without a kill: ${summary}`);
  // Otherwise the run proved nothing about crashes.
  assert(report.kills >= 1, `no worker was killed: ${summary}`);
});
