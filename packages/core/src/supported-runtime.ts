// Refuses to load on a Node.js older than the one Fedwork is built and
// tested for, with a message that says so.  npm only warns about the
// `engines` field, and an older Node.js otherwise fails later with an error
// that names something else (a missing API, or ERR_UNKNOWN_FILE_EXTENSION
// for the TypeScript sources), which sends the user looking in the wrong
// place.  Deno, Bun and workerd (with nodejs_compat) report the Node.js
// version of their own compatibility layer, so only Node.js itself is
// checked: no Deno or Bun global, and a navigator.userAgent that is Node's
// ("Node.js/24") or none at all (Node.js before 21 has no navigator).

/** The oldest Node.js major version Fedwork supports. */
export const MINIMUM_NODE_MAJOR = 24;

/**
 * The message to refuse a runtime with, or `undefined` when it is supported.
 * @param runtime What the runtime says of itself: `process.versions.node`,
 *   whether `Deno` or `Bun` globals exist, and `navigator.userAgent`.
 */
export function unsupportedRuntimeMessage(runtime: {
  readonly node?: string;
  readonly deno: boolean;
  readonly bun: boolean;
  /** `navigator.userAgent`, when there is a navigator. */
  readonly userAgent?: string;
}): string | undefined {
  if (runtime.deno || runtime.bun || runtime.node == null) return undefined;
  if (runtime.userAgent != null && !runtime.userAgent.startsWith("Node.js/")) return undefined;
  const major = Number.parseInt(runtime.node, 10);
  if (Number.isNaN(major) || major >= MINIMUM_NODE_MAJOR) return undefined;
  return `Fedwork needs Node.js ${MINIMUM_NODE_MAJOR} or later; this is Node.js ${runtime.node}. ` +
    `Install Node.js ${MINIMUM_NODE_MAJOR} (an LTS release) and run the app again.`;
}

const globals = globalThis as {
  process?: { versions?: { node?: string } };
  Deno?: unknown;
  Bun?: unknown;
  navigator?: { userAgent?: string };
};
const refusal = unsupportedRuntimeMessage({
  node: globals.process?.versions?.node,
  deno: globals.Deno != null,
  bun: globals.Bun != null,
  userAgent: globals.navigator?.userAgent,
});
if (refusal != null) throw new Error(refusal);
