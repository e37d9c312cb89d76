// One signal that never aborts, for runs with no worker signal to follow.
// Made on first use, not when the module loads: Cloudflare Workers refuse
// some objects at a module's top level, and releases of workerd before
// 2026-08 count an AbortController among them.

let neverAbortedSignal: AbortSignal | undefined;

/**
 * A signal that never aborts, shared by every caller.  Internal.
 * @returns The signal.
 * @since 0.3.0
 */
export function neverAborted(): AbortSignal {
  return neverAbortedSignal ??= new AbortController().signal;
}
