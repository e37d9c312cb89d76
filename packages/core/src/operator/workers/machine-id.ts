// The machine a worker runs on: an id the operator chooses (a pod's name,
// a VM's), or the host name where the runtime has node:os.  Workers,
// task status records and webhook payloads carry it.

/**
 * The longest machine id accepted, in characters: a host name has at most
 * 253, and an id travels in every task update and webhook payload.
 * @since 0.4.0
 */
export const MAX_MACHINE_ID_LENGTH = 256;

/**
 * Checks a `machineId` option: a non-empty string of at most
 * {@link MAX_MACHINE_ID_LENGTH} characters, without control characters.
 * @param value The option's value.
 * @param where Where it was given, for the message: `"createFederation()"`
 *              or `"startQueue()"`.
 * @returns The id, or `undefined` when the option was not given.
 * @throws {TypeError} When it is invalid; the message names the option.
 * @since 0.4.0
 */
export function checkMachineId(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new TypeError(
      `The machineId option of ${where} must be a non-empty string, e.g. "web-1"; got ${
        describe(value)
      }.`,
    );
  }
  if (value.length > MAX_MACHINE_ID_LENGTH) {
    throw new TypeError(
      `The machineId option of ${where} is ${value.length} characters long; at most ` +
        `${MAX_MACHINE_ID_LENGTH} are allowed.`,
    );
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) {
    throw new TypeError(
      `The machineId option of ${where} must not contain control characters; got ${
        JSON.stringify(value)
      }.`,
    );
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  return `a ${typeof value}`;
}

/**
 * The machine's host name, from `node:os` loaded on first use: importing it
 * when the module loads would keep core from loading where there is no
 * `node:os` (Cloudflare Workers).  Empty where it cannot be had.
 * @returns The host name, or `""`.
 * @since 0.4.0
 */
export async function localHostName(): Promise<string> {
  try {
    const os = await import("node:os");
    return os.hostname();
  } catch {
    return "";
  }
}

/**
 * The machine's host name, at once, through `process.getBuiltinModule()`
 * (Node.js 22.3+, Deno 2, Bun), which loads `node:os` without an import.
 * @returns The host name, `""` when the runtime refuses it (Deno without
 *          `--allow-sys`), or `undefined` when the runtime has no
 *          `getBuiltinModule()` (then {@link localHostName} may still tell).
 * @since 0.4.0
 */
export function hostNameNow(): string | undefined {
  const runtimeProcess = (globalThis as {
    process?: { getBuiltinModule?: (id: string) => unknown };
  }).process;
  if (typeof runtimeProcess?.getBuiltinModule !== "function") return undefined;
  try {
    const os = runtimeProcess.getBuiltinModule("node:os") as
      | { hostname?: () => string }
      | undefined;
    return typeof os?.hostname === "function" ? os.hostname() : undefined;
  } catch {
    return "";
  }
}

/**
 * A worker's machine id: the one given, else the host name, else
 * `"unknown"` (a runtime without `node:os` and no id given).
 * @param given The checked option, if any.
 * @param hostName The machine's host name, or `""`.
 * @returns The id.
 * @since 0.4.0
 */
export function resolveMachineId(given: string | undefined, hostName: string): string {
  if (given != null) return given;
  return hostName === "" ? "unknown" : hostName.slice(0, MAX_MACHINE_ID_LENGTH);
}
