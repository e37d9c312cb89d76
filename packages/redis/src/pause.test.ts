// Pausing and resuming on Redis: two worker processes with their own
// connections, the pause announced through RedisPubSub.
import { testPauseAndResume } from "@fedwork/testing";

testPauseAndResume({
  name: "RedisMessageQueue",
  backendModule: new URL("./testdata/pause-backend.ts", import.meta.url).href,
});
