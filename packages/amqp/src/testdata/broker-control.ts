// Reaching into the broker from tests with rabbitmqctl: closing a client's
// connection on the broker's side is how a test kills a worker without
// killing the test process.
import { execFile } from "node:child_process";

/** Runs rabbitmqctl and returns its standard output. */
export function rabbitmqctl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("rabbitmqctl", args, (error, stdout) => error ? reject(error) : resolve(stdout));
  });
}

/**
 * Closes, on the broker's side, every connection whose client-provided
 * name contains `text`; returns how many it closed.
 */
export async function closeConnectionsNamed(text: string): Promise<number> {
  const listing = await rabbitmqctl(
    "-q",
    "--no-table-headers",
    "list_connections",
    "pid",
    "client_properties",
  );
  const pids = listing.split("\n").filter((line) => line.includes(text)).map((line) =>
    line.split("\t")[0]
  );
  for (const pid of pids) await rabbitmqctl("close_connection", pid, "fedwork test");
  return pids.length;
}
