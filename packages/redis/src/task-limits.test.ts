// Per-key concurrency and rate limits of tasks across two worker processes
// on Redis: a key limited to 2 never runs 3 at once, other keys are not
// blocked, and a rate of 20 a second is kept.
import { testTaskLimits } from "@fedwork/testing";

testTaskLimits({
  name: "RedisMessageQueue",
  backendModule: new URL("./testdata/limits-backend.ts", import.meta.url).href,
});
