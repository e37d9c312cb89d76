// Workers grouped by the machine they run on, for operators who think in
// machines (a pod, a VM) rather than in processes.
import type { WorkerInfo, WorkerMachine, WorkerState } from "./types.ts";

/**
 * Groups workers by their machine: one entry per `machineId`, in order of
 * the machine's id, each with its workers in the order given and a count
 * per state.
 * @param workers The workers, e.g. what `federation.listWorkers()` returns.
 * @returns The machines.
 * @example
 * ```ts ignore
 * for (const machine of groupWorkersByMachine(await federation.listWorkers())) {
 *   console.log(machine.machineId, machine.workers.length, machine.states.busy);
 * }
 * ```
 * @since 0.4.0
 */
export function groupWorkersByMachine(workers: readonly WorkerInfo[]): WorkerMachine[] {
  const byMachine = new Map<string, WorkerInfo[]>();
  for (const worker of workers) {
    const list = byMachine.get(worker.machineId);
    if (list == null) byMachine.set(worker.machineId, [worker]);
    else list.push(worker);
  }
  return [...byMachine].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(
    ([machineId, list]) => {
      const states: Record<WorkerState, number> = { busy: 0, idle: 0, stopping: 0, offline: 0 };
      for (const worker of list) states[worker.state]++;
      return { machineId, workers: list, states };
    },
  );
}
