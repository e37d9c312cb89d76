// Debounce and throttle on enqueue across processes on Postgres: a
// burst runs once with its last payload, maxWait bounds it, throttled
// enqueues are reported, and a killed worker loses nothing.
import { testDebounceAndThrottle } from "@fedwork/testing";

testDebounceAndThrottle({
  name: "PostgresMessageQueue",
  backendModule: new URL("./testdata/flow-control-backend.ts", import.meta.url).href,
});
