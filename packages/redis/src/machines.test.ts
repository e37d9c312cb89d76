// Worker and machine ids on Redis: two worker processes on one server,
// each with its own machineId, seen by listWorkers(), in the task updates
// RedisPubSub carries and in webhook payloads.
import { testWorkerMachines } from "@fedwork/testing";

testWorkerMachines({
  name: "RedisMessageQueue",
  backendModule: new URL("./testdata/machines-backend.ts", import.meta.url).href,
});
