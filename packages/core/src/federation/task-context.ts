import type { BatchEnqueueOrigin } from "../operator/batches/batches.ts";
import type { BatchEnqueueResult, BatchMember } from "../operator/batches/types.ts";
import type { TaskRunInfo } from "../tasks/run-info.ts";
import type { TaskMessage } from "../tasks/message.ts";
import { stepRunnerFor, type StepRunnerHost, stepRunnerOf } from "../tasks/steps/mod.ts";
import type { TaskSteps } from "../tasks/steps/types.ts";
import { type ContextHost, ContextImpl } from "./context.ts";
import type { TaskContext } from "./context-api.ts";

/**
 * How many batch calls each run made so far, shared by a run's clones: the
 * calls' numbers make the ids a run derives.
 */
const batchCalls = new WeakMap<TaskRunInfo, { batch: number; add: number }>();

/**
 * The {@link TaskContext} implementation.  Internal.
 * @since 0.2.0
 */
export class TaskContextImpl<TContextData> extends ContextImpl<TContextData>
  implements TaskContext<TContextData> {
  readonly task: TaskRunInfo;
  /** The run's message, for a runner made on first use of `ctx.step`. */
  readonly #message: TaskMessage | undefined;
  readonly #steps: StepRunnerHost | undefined;

  /**
   * @param host The federation's internals.
   * @param url The base URL the task was enqueued from, which other
   *            contexts may share (the context copies it before handing it
   *            out).
   * @param data The application data.
   * @param task The run information.
   * @param message The run's message (a worker's run).
   * @param steps Where durable steps keep their records (a worker's run).
   */
  constructor(
    host: ContextHost<TContextData>,
    url: URL,
    data: TContextData,
    task: TaskRunInfo,
    message?: TaskMessage,
    steps?: StepRunnerHost,
  ) {
    super(host, url, data, true);
    this.task = task;
    this.#message = message;
    this.#steps = steps;
  }

  get step(): TaskSteps {
    let runner = stepRunnerOf(this.task);
    // Made on first use, for a task with one payload per run: a handleMany
    // run shares one context among its items.
    if (
      runner == null && this.#message != null && this.#steps != null &&
      this.federationHost.registry.tasks.get(this.task.name)?.many == null
    ) {
      runner = stepRunnerFor(this.task, this.#steps, this.#message);
    }
    if (runner == null) {
      throw new TypeError(
        `The task ${JSON.stringify(this.task.name)} (${this.task.id}) runs without durable ` +
          "steps; ctx.step is only available in the handler of a task with one payload per " +
          "run (not handleMany) that a federation's worker runs.",
      );
    }
    return runner;
  }

  override clone(data: TContextData): TaskContextImpl<TContextData> {
    return new TaskContextImpl(
      this.federationHost,
      this.url,
      data,
      this.task,
      this.#message,
      this.#steps,
    );
  }

  addToBatch(members: readonly BatchMember<TContextData>[]): Promise<BatchEnqueueResult> {
    const batchId = this.task.batchId;
    if (batchId == null) {
      return Promise.reject(
        new TypeError(
          `The task ${JSON.stringify(this.task.name)} (${this.task.id}) is not a batch member; ` +
            "only members of a batch may call addToBatch().",
        ),
      );
    }
    try {
      return this.batchesOf().add(batchId, this.task.id, members, this.batchOrigin("add"));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  protected override batchOrigin(kind: "batch" | "add"): BatchEnqueueOrigin {
    let calls = batchCalls.get(this.task);
    if (calls == null) batchCalls.set(this.task, calls = { batch: 0, add: 0 });
    const call = calls[kind]++;
    return { ...super.batchOrigin(kind), seed: `${this.task.id}:${kind}:${call}` };
  }
}
