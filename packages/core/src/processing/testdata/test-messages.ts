// The message kind and retry queue the dispatcher's tests share.
import type { MessageQueue, MessageQueueEnqueueOptions } from "../../queue/message-queue.ts";
import type { BaseMessage } from "../envelope.ts";

/** A message of the test kind; `behaviour` tells its handler what to do. */
export interface TestMessage<TBehaviour extends string = string> extends BaseMessage {
  readonly type: "test";
  readonly behaviour: TBehaviour;
}

/** A fresh test message, as a queue would deliver it on `attempt`. */
export function testMessage<TBehaviour extends string>(
  behaviour: TBehaviour,
  attempt = 0,
): TestMessage<TBehaviour> {
  return {
    type: "test",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com/",
    started: new Date().toISOString(),
    attempt,
    traceContext: {},
    behaviour,
  };
}

/** A queue that records what the dispatcher enqueues (its retries). */
export class RecordingQueue<TMessage extends BaseMessage = TestMessage> implements MessageQueue {
  readonly enqueued: { message: TMessage; options?: MessageQueueEnqueueOptions }[] = [];
  readonly nativeRetrial: boolean;
  readonly failing: boolean;
  /**
   * @param nativeRetrial Whether the queue retries by itself.
   * @param failing Whether every enqueue fails.
   */
  constructor(nativeRetrial = false, failing = false) {
    this.nativeRetrial = nativeRetrial;
    this.failing = failing;
  }
  enqueue(message: TMessage, options?: MessageQueueEnqueueOptions): Promise<void> {
    if (this.failing) return Promise.reject(new Error("unreachable"));
    this.enqueued.push({ message, options });
    return Promise.resolve();
  }
  listen(): Promise<void> {
    return Promise.resolve();
  }
}
