/**
 * The federation: creating it (directly or through a builder), its options,
 * contexts, queue messages and workers.
 * @module
 * @since 0.1.0
 */
export { createFederationBuilder, type FederationBuilder } from "./builder.ts";
export type {
  ActorAliasMapper,
  ActorDispatcher,
  ActorHandleMapper,
  ActorKeyPairsDispatcher,
  AuthorizePredicate,
  CollectionCounter,
  CollectionCursor,
  CollectionDispatcher,
  CustomCollectionCounter,
  CustomCollectionCursor,
  CustomCollectionDispatcher,
  FollowerItem,
  InboxErrorHandler,
  InboxListener,
  NodeInfoDispatcher,
  ObjectAuthorizePredicate,
  ObjectDispatcher,
  OutboxPermanentFailure,
  OutboxPermanentFailureHandler,
  PageItems,
  SharedInboxKeyDispatcher,
  UnverifiedActivityHandler,
  UnverifiedActivityReason,
  WebFingerLinksDispatcher,
} from "./callbacks.ts";
export type { Context, ParseUriResult } from "./context-api.ts";
export type { FederationFetchOptions } from "./api.ts";
export type { InboxContext } from "./context-api.ts";
export type { GetActorOptions, GetSignedKeyOptions, RequestContext } from "./context-api.ts";
export {
  DeliveryError,
  DuplicateRegistrationError,
  FederationOptionError,
  PrivateAddressError,
  RouteNotRegisteredError,
  RoutePathError,
} from "./errors.ts";
export type {
  ActorCallbackSetters,
  CollectionCallbackSetters,
  CustomCollectionCallbackSetters,
  Federatable,
  InboxListenerSetters,
  ObjectCallbackSetters,
} from "./federatable-api.ts";
export {
  createFederation,
  type Federation,
  type FederationStartQueueOptions,
  type ProcessQueuedMessageOptions,
} from "./federation.ts";
export { DEFAULT_USER_AGENT, type FederationOptions } from "./options.ts";
export type { FederationKvPrefixes } from "./kv-prefixes.ts";
export type { OutboxContext } from "./context-api.ts";
export type { OutboxListener, OutboxListenerErrorHandler } from "./callbacks.ts";
export type { OutboxListenerSetters } from "./federatable-api.ts";
export type { FederationHostHealthOptions } from "../operator/host-health/options.ts";
export type { FanoutDeliveriesOptions } from "../activitypub/outbox/fanout.ts";
export type { HostBlockPredicate, HostPolicyOptions } from "../activitypub/host-policy/options.ts";
export type {
  HostConcurrencyFunction,
  HostRate,
  HostRateFunction,
} from "../activitypub/host-policy/limits-options.ts";
export { BlockedHostError } from "../activitypub/outbox/errors.ts";
export type { HostHealthOperations } from "../operator/host-health/mod.ts";
export type { FederationWebhookOptions } from "../operator/webhooks/options.ts";
export type { FederationRemoteRequestOptions } from "../activitypub/network/remote-request-options.ts";
export type { WebhookOperations } from "../operator/webhooks/mod.ts";
export type { FederationOperationsOptions } from "../operator/records/options.ts";
export type {
  CountFailedTasksOptions,
  FailedTaskDetails,
  TaskOperations,
} from "../operator/records/mod.ts";
export type { TaskScheduleOptions } from "../operator/schedules/mod.ts";
export type { QueueDepthEntry, QueueMonitoring } from "../operator/monitoring/mod.ts";
export type {
  DocumentLoaderFactory,
  DocumentLoaderFactoryOptions,
  FederationOrigin,
  UserAgentOptions,
} from "./option-forms.ts";
export type {
  TaskContext,
  TaskDefinitionManyOptions,
  TaskDefinitionOptions,
  TaskRegistry,
} from "./context-api.ts";
export {
  type FederationQueueOptions,
  QUEUE_ROLES,
  type QueueRole,
} from "../processing/queue-roles.ts";
export type {
  ActivityClass,
  IdempotencyKeyCallback,
  IdempotencyStrategy,
  ObjectClass,
} from "./registry-api.ts";
export type {
  SendActivityOptions,
  SendActivityOptionsForCollection,
  SenderIdentity,
} from "../activitypub/outbox/send-options.ts";
export type { TaskStatusOperations, WatchTaskOptions } from "../operator/status/mod.ts";
export type {
  TaskCancelOperations,
  TaskCancelOptions,
  TaskCancelResult,
} from "../operator/cancellation/mod.ts";
