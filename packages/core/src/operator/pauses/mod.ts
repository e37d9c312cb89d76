export {
  FederationPauses,
  type PausableTask,
  PAUSE_RECHECK_MS,
  type PausedWork,
  type PauseOperations,
} from "./pauses.ts";
