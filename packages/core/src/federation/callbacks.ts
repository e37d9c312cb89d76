import type { Activity, Actor, Object as APObject, Recipient, Tombstone } from "@fedify/vocab";
import type { NodeInfo } from "../activitypub/nodeinfo/document.ts";
import type { WebFingerLink } from "../activitypub/webfinger/handler.ts";
import type { PageItems } from "../activitypub/collections/build.ts";
import type { UnverifiedActivityReason } from "../activitypub/inbox/unverified.ts";
import type { OutboxPermanentFailure } from "../activitypub/outbox/delivery.ts";
import type { Context } from "./context-api.ts";
import type { InboxContext } from "./context-api.ts";
import type { OutboxContext, RequestContext } from "./context-api.ts";

export type { OutboxPermanentFailure, PageItems, UnverifiedActivityReason };

/**
 * Returns the actor with the given identifier, a `Tombstone` for an actor
 * that is gone (served as 410 Gone), or `null` when there is none.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export type ActorDispatcher<TContextData> = (
  ctx: RequestContext<TContextData>,
  identifier: string,
) => Actor | Tombstone | null | Promise<Actor | Tombstone | null>;

/**
 * Returns an actor's key pairs, in order: the first RSASSA-PKCS1-v1_5 key
 * signs HTTP requests (`#main-key`), Ed25519 keys are for object proofs.
 * Typically imported from stored JWKs with `importJwk()`.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type ActorKeyPairsDispatcher<TContextData> = (
  ctx: Context<TContextData>,
  identifier: string,
) => readonly CryptoKeyPair[] | Promise<readonly CryptoKeyPair[]>;

/**
 * Maps a WebFinger resource that is neither a handle nor an actor's URI
 * (e.g. a profile page's URL, `https://example.com/@alice`) to the actor it
 * stands for: by identifier, or by username (then mapped as a handle, by
 * the handle mapper if any), or `null` for none.
 * @typeParam TContextData The context data type.
 * @param ctx The WebFinger request's context.
 * @param resource The resource asked for.
 * @returns The actor's identifier or username, or `null`.
 * @since 0.3.0
 */
export type ActorAliasMapper<TContextData> = (
  ctx: RequestContext<TContextData>,
  resource: URL,
) =>
  | { readonly identifier: string }
  | { readonly username: string }
  | null
  | Promise<{ readonly identifier: string } | { readonly username: string } | null>;

/**
 * Maps a WebFinger username (`alice` of `acct:alice@example.com`) to an
 * actor's identifier, or `null` when there is no such user.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type ActorHandleMapper<TContextData> = (
  ctx: Context<TContextData>,
  username: string,
) => string | null | Promise<string | null>;

/**
 * Tells whether a request may see an actor or one of its collections
 * (e.g. check `await ctx.getSignedKeyOwner()`); `false` answers 401.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type AuthorizePredicate<TContextData> = (
  ctx: RequestContext<TContextData>,
  identifier: string,
) => boolean | Promise<boolean>;

/**
 * Returns the object of a class for the values of its path's variables, or
 * `null` when there is none.
 * @typeParam TContextData The context data type.
 * @typeParam TObject The object's class.
 * @since 0.2.0
 */
export type ObjectDispatcher<TContextData, TObject extends APObject> = (
  ctx: RequestContext<TContextData>,
  values: Readonly<Record<string, string>>,
) => TObject | null | Promise<TObject | null>;

/**
 * Tells whether a request may see an object; `false` answers 401.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type ObjectAuthorizePredicate<TContextData> = (
  ctx: RequestContext<TContextData>,
  values: Readonly<Record<string, string>>,
) => boolean | Promise<boolean>;

/**
 * Returns a collection's items.  With `cursor` `null` it returns the whole
 * collection at once, or `null` when the collection is paged (then
 * `setFirstCursor()` names the first page); with a cursor, that page.
 * Returns `null` when the actor has no such collection.
 * @typeParam TItem The type of the collection's items.
 * @typeParam TContextData The context data type.
 * @typeParam TContext The context the dispatcher gets: a
 *                     `RequestContext` for collections only served over
 *                     HTTP (since 0.3.0), a `Context` for followers,
 *                     which `sendActivity()` reads too.
 * @since 0.1.0
 */
export type CollectionDispatcher<
  TItem,
  TContextData,
  TContext extends Context<TContextData> = Context<TContextData>,
> = (
  ctx: TContext,
  identifier: string,
  cursor: string | null,
) => PageItems<TItem> | null | Promise<PageItems<TItem> | null>;

/**
 * Returns how many items a collection has (its `totalItems`), or `null`
 * when unknown.
 * @typeParam TContextData The context data type.
 * @typeParam TContext The context it gets (since 0.3.0).
 * @since 0.2.0
 */
export type CollectionCounter<
  TContextData,
  TContext extends Context<TContextData> = Context<TContextData>,
> = (
  ctx: TContext,
  identifier: string,
) => number | bigint | null | Promise<number | bigint | null>;

/**
 * Returns the cursor of a collection's first (or last) page, or `null` when
 * the collection is not paged.
 * @typeParam TContextData The context data type.
 * @typeParam TContext The context it gets (since 0.3.0).
 * @since 0.2.0
 */
export type CollectionCursor<
  TContextData,
  TContext extends Context<TContextData> = Context<TContextData>,
> = (
  ctx: TContext,
  identifier: string,
) => string | null | Promise<string | null>;

/**
 * Returns a custom collection's items for the values of its path's
 * variables, as {@link CollectionDispatcher} does for an actor's: the
 * whole collection for cursor `null` (or `null` when it is paged), else
 * that page; `null` when there is no such collection.  Fedify's type, with
 * its type parameters in its order.
 * @typeParam TItem The type of the collection's items.
 * @typeParam TParam The names of the path's variables.
 * @typeParam TContext The context it gets (a `RequestContext`).
 * @typeParam TContextData The context data type.
 * @since 0.3.0
 */
export type CustomCollectionDispatcher<
  TItem,
  TParam extends string,
  TContext extends Context<TContextData>,
  TContextData,
> = (
  ctx: TContext,
  values: Record<TParam, string>,
  cursor: string | null,
) => PageItems<TItem> | null | Promise<PageItems<TItem> | null>;

/**
 * Returns how many items a custom collection has, or `null` when unknown.
 * @typeParam TParam The names of the path's variables.
 * @typeParam TContextData The context data type.
 * @since 0.3.0
 */
export type CustomCollectionCounter<TParam extends string, TContextData> = (
  ctx: RequestContext<TContextData>,
  values: Record<TParam, string>,
) => number | bigint | null | Promise<number | bigint | null>;

/**
 * Returns the cursor of a custom collection's first (or last) page, or
 * `null` when it is not paged.
 * @typeParam TParam The names of the path's variables.
 * @typeParam TContext The context it gets (a `RequestContext`).
 * @typeParam TContextData The context data type.
 * @since 0.3.0
 */
export type CustomCollectionCursor<
  TParam extends string,
  TContext extends Context<TContextData>,
  TContextData,
> = (
  ctx: TContext,
  values: Record<TParam, string>,
) => string | null | Promise<string | null>;

/**
 * Handles one received activity of a given class.
 * @typeParam TContextData The context data type.
 * @typeParam TActivity The activity class the listener was registered for.
 * @since 0.1.0
 */
export type InboxListener<TContextData, TActivity extends Activity> = (
  ctx: InboxContext<TContextData>,
  activity: TActivity,
) => void | Promise<void>;

/**
 * Called when an inbox listener throws, before the failure is retried.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export type InboxErrorHandler<TContextData> = (
  ctx: InboxContext<TContextData>,
  error: Error,
) => void | Promise<void>;

/**
 * Sees an activity that an inbox received with a missing or failing HTTP
 * signature, before the inbox refuses it.  Return a `Response` to answer
 * with it instead of the default 401 (e.g. 202 for a `Delete` of an actor
 * whose key is gone), or nothing to keep the 401.  The inbox listeners
 * never see such an activity, whatever this returns; it is not
 * deduplicated or queued.
 * @typeParam TContextData The context data type.
 * @param ctx The request's context.
 * @param activity The activity as sent, unverified: anyone could have
 *                 written it.
 * @param reason Why its signature was refused.
 * @returns A response to answer with, or nothing for the default 401.
 * @since 0.3.0
 */
export type UnverifiedActivityHandler<TContextData> = (
  ctx: RequestContext<TContextData>,
  activity: Activity,
  reason: UnverifiedActivityReason,
) => void | Response | Promise<void | Response>;

/**
 * Names the actor whose key signs an inbox's key fetches, or `null` to
 * fetch unsigned.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type SharedInboxKeyDispatcher<TContextData> = (
  ctx: Context<TContextData>,
) =>
  | { readonly identifier: string }
  | null
  | Promise<{ readonly identifier: string } | null>;

/**
 * Returns the NodeInfo metadata served at the NodeInfo path.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type NodeInfoDispatcher<TContextData> = (
  ctx: RequestContext<TContextData>,
) => NodeInfo | Promise<NodeInfo>;

/**
 * Returns more links for an actor's WebFinger answer (e.g. its profile
 * page), besides the `self` link.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type WebFingerLinksDispatcher<TContextData> = (
  ctx: RequestContext<TContextData>,
  resource: URL,
) => readonly WebFingerLink[] | Promise<readonly WebFingerLink[]>;

/**
 * Called once when a delivery fails for good: the inbox answered one of
 * the `permanentFailureStatusCodes` (404 and 410 by default), so the
 * activity is not retried.  Typically removes the followers it names.  An
 * error it throws is logged and ignored.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export type OutboxPermanentFailureHandler<TContextData> = (
  ctx: Context<TContextData>,
  failure: OutboxPermanentFailure,
) => void | Promise<void>;

/**
 * The followers collection's item type: anything with an inbox.
 * @since 0.1.0
 */
export type FollowerItem = Recipient;

/**
 * Handles an activity POSTed to an outbox, Fedify's type of the same name.
 * @typeParam TContextData The context data type.
 * @typeParam TActivity The activity class it is registered for.
 * @since 0.4.0
 */
export type OutboxListener<TContextData, TActivity extends Activity> = (
  context: OutboxContext<TContextData>,
  activity: TActivity,
) => void | Promise<void>;

/**
 * Called when an outbox POST cannot be parsed or a listener throws,
 * Fedify's type of the same name.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export type OutboxListenerErrorHandler<TContextData> = (
  context: OutboxContext<TContextData>,
  error: Error,
) => void | Promise<void>;
