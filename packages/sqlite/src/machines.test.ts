// Worker and machine ids on SQLite: two worker processes sharing one
// database file, each with its own machineId, seen by listWorkers(), in
// the task updates SqlitePubSub carries and in webhook payloads.
import { testWorkerMachines } from "@fedwork/testing";

testWorkerMachines({
  name: "SqliteMessageQueue",
  backendModule: new URL("./testdata/machines-backend.ts", import.meta.url).href,
});
