// Controllers that follow a worker's signal: every run of a worker makes
// one that must abort when the worker stops, and a listener per run on the
// worker's signal (added, then removed) cost about a microsecond each
// time.  One listener per worker signal serves them all instead.
import { InFlightList } from "./in-flight-list.ts";

/**
 * The controllers following each worker signal: a list rather than a set,
 * as each run adds one and removes it (see `InFlightList`).
 */
const followers = new WeakMap<AbortSignal, InFlightList<AbortController>>();

/**
 * The list of the controllers following `parent`, to which the caller adds
 * `controller` (and removes it once its run ended): each is aborted with
 * `parent`'s reason when `parent` aborts.  Internal.
 * @param parent The signal to follow (a worker's).
 * @param controller The run's controller, aborted at once when `parent`
 *                   has aborted already.
 * @returns The list, or `undefined` (with `controller` aborted) when
 *          `parent` had aborted already.
 * @since 0.4.0
 */
export function followSignal(
  parent: AbortSignal,
  controller: AbortController,
): InFlightList<AbortController> | undefined {
  if (parent.aborted) {
    controller.abort(parent.reason);
    return undefined;
  }
  let runs = followers.get(parent);
  if (runs == null) {
    const created = new InFlightList<AbortController>();
    followers.set(parent, runs = created);
    parent.addEventListener("abort", () => {
      followers.delete(parent);
      for (const run of created.values()) {
        if (!run.signal.aborted) run.abort(parent.reason);
      }
    }, { once: true });
  }
  return runs;
}
