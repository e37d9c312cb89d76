// Runs one microblog server:
//
//   node examples/microblog/src/main.ts [--role all|web|worker] [--port 8000]
//        [--data ./data] [--origin http://127.0.0.1:8000] [--user alice]…
//        [--grace 20]
//
// `--role web` serves HTTP and only enqueues; `--role worker` runs the queue
// workers (deliveries, inbox listeners, tasks, the digest schedule) with no
// HTTP; `all` (the default) does both in one process.  Start a web and a
// worker process with the same --data and --origin to split them.
//
// SIGTERM or SIGINT stops it: the workers take no more messages, running
// ones get --grace seconds to finish (a second signal aborts them at once),
// then the connections close and the process exits by itself.
import { parseArgs } from "node:util";
import process from "node:process";
import { configure, getConsoleSink } from "@logtape/logtape";
import { closeOnSignals } from "@fedwork/core";
import { type Role, startInstance } from "./instance.ts";

const { values } = parseArgs({
  options: {
    role: { type: "string", default: "all" },
    port: { type: "string", default: process.env.PORT ?? "8000" },
    data: { type: "string", default: "data" },
    origin: { type: "string" },
    user: { type: "string", multiple: true, default: [] },
    name: { type: "string", default: "microblog" },
    grace: { type: "string", default: "20" },
  },
});
const role = values.role as Role;
if (!["all", "web", "worker"].includes(role)) {
  process.stderr.write(`--role must be all, web or worker, not ${role}\n`);
  process.exit(2);
}
const port = Number(values.port);
const grace = Number(values.grace);
if (!(grace >= 0)) {
  process.stderr.write(`--grace must be a number of seconds, not ${values.grace}\n`);
  process.exit(2);
}
await configure({
  sinks: { console: getConsoleSink() },
  loggers: [
    { category: ["fedwork"], sinks: ["console"], lowestLevel: "info" },
    { category: ["logtape", "meta"], sinks: ["console"], lowestLevel: "warning" },
  ],
});
const instance = await startInstance({
  name: values.name,
  role,
  port,
  dataDir: values.data,
  origin: new URL(values.origin ?? `http://127.0.0.1:${port}`),
  users: values.user,
  apiToken: process.env.API_TOKEN,
  healthToken: process.env.HEALTH_TOKEN || undefined,
  env: process.env,
});
// Before the line that says it runs: a signal after it must close it.
using closing = closeOnSignals(instance, { grace: { seconds: grace } });
process.stdout.write(
  `${role} process for ${instance.url.href} (${instance.backends}, data in ${values.data})\n`,
);
await closing.closed;
