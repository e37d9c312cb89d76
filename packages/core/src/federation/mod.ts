/**
 * The federation: creating it (directly or through a builder), its options,
 * contexts, queue messages and workers.
 * @module
 * @since 0.1.0
 */
export { createFederationBuilder, type FederationBuilder } from "./builder.ts";
export type {
  ActorDispatcher,
  CollectionDispatcher,
  FollowerItem,
  InboxErrorHandler,
  InboxListener,
  PageItems,
} from "./callbacks.ts";
export type { Context } from "./context.ts";
export {
  DeliveryError,
  DuplicateRegistrationError,
  FederationOptionError,
  PrivateAddressError,
  RouteNotRegisteredError,
  RoutePathError,
} from "./errors.ts";
export type { Federatable, InboxListenerSetters } from "./federatable.ts";
export {
  createFederation,
  type Federation,
  type FederationStartQueueOptions,
} from "./federation.ts";
export type {
  BaseMessage,
  FanoutInbox,
  FanoutMessage,
  InboxMessage,
  Message,
  MessageType,
  OutboxMessage,
} from "./message.ts";
export { DEFAULT_USER_AGENT, type FederationOptions } from "./options.ts";
export type {
  DocumentLoaderFactory,
  DocumentLoaderFactoryOptions,
  FederationOrigin,
  UserAgentOptions,
} from "./option-forms.ts";
export type { TaskContext, TaskDefinitionOptions, TaskRegistry } from "./task-context.ts";
export { type FederationQueueOptions, QUEUE_ROLES, type QueueRole } from "./queue-roles.ts";
export type { ActivityClass } from "./registry.ts";
export {
  FANOUT_THRESHOLD,
  type SendActivityOptions,
  type SenderIdentity,
} from "./send-activity.ts";
