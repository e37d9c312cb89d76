// The host policy across two worker processes on SQLite: per-host
// concurrency and rate, blocked hosts and Retry-After, against loopback
// servers.
import { testHostLimits } from "@fedwork/testing";

testHostLimits({
  name: "SqliteMessageQueue",
  backendModule: new URL("./testdata/host-limits-backend.ts", import.meta.url).href,
});
