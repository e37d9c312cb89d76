export type { PubSub, PubSubSubscribeOptions } from "./pubsub.ts";
export { InProcessPubSub } from "./in-process-pubsub.ts";
