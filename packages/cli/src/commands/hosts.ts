// `fedwork hosts` and `fedwork hosts release <host>`: remote servers whose
// deliveries are parked or refused, and declaring one healthy again.
import { serializeHostHealth } from "@fedwork/dashboard/json";
import type { CommandSpec } from "../command.ts";
import { CliFailure, EXIT_OK } from "../errors.ts";
import { formatTime, renderTable } from "../table.ts";

/** `fedwork hosts` (and `fedwork hosts list`). */
export const hostsCommand: CommandSpec = {
  words: ["hosts"],
  summary: "list the unhealthy remote hosts (deliveries parked or refused)",
  details: "Empty when the federation's hostHealth option is off.",
  async run({ federation, json, print }) {
    const hosts = (await federation.listUnhealthyHosts()).map(serializeHostHealth);
    if (json) {
      await print(JSON.stringify(hosts));
      return EXIT_OK;
    }
    if (hosts.length === 0) {
      await print("No unhealthy hosts.");
      return EXIT_OK;
    }
    await print(renderTable(
      ["HOST", "STATE", "FAILURES", "PARKED", "SINCE", "NEXT PROBE"],
      hosts.map((host) => [
        host.host,
        host.dead ? "dead" : "unhealthy",
        String(host.consecutiveFailures),
        String(host.parkedDeliveries),
        formatTime(host.since),
        formatTime(host.nextProbeAt),
      ]),
    ));
    return EXIT_OK;
  },
};

/** `fedwork hosts list`: the same as `fedwork hosts`. */
export const hostsListCommand: CommandSpec = {
  ...hostsCommand,
  words: ["hosts", "list"],
  alias: true,
};

/** `fedwork hosts release <host>`. */
export const hostsReleaseCommand: CommandSpec = {
  words: ["hosts", "release"],
  summary: "declare a host healthy again: it takes deliveries, its parked ones are sent",
  details: "Failed deliveries to it stay in the failed-task store; replay them with\n" +
    "fedwork failed replay <id>.  Fails (exit 1) when the host was not unhealthy.",
  arguments: ["host"],
  async run({ federation, args, json, print }) {
    const released = await federation.releaseHost(args.host);
    if (!released) throw new CliFailure(`host ${args.host} is not unhealthy or dead.`);
    await print(json ? JSON.stringify({ host: args.host, released }) : `Released ${args.host}.`);
    return EXIT_OK;
  },
};
