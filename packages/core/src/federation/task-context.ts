import type { TaskRunInfo } from "../tasks/run-info.ts";
import { type ContextHost, ContextImpl } from "./context.ts";
import type { TaskContext } from "./context-api.ts";

/**
 * The {@link TaskContext} implementation.  Internal.
 * @since 0.2.0
 */
export class TaskContextImpl<TContextData> extends ContextImpl<TContextData>
  implements TaskContext<TContextData> {
  readonly task: TaskRunInfo;

  /**
   * @param host The federation's internals.
   * @param url The base URL the task was enqueued from.
   * @param data The application data.
   * @param task The run information.
   */
  constructor(host: ContextHost<TContextData>, url: URL, data: TContextData, task: TaskRunInfo) {
    super(host, url, data);
    this.task = task;
  }

  override clone(data: TContextData): TaskContextImpl<TContextData> {
    return new TaskContextImpl(this.federationHost, this.url, data, this.task);
  }
}
