import type { Activity, Actor, Recipient } from "@fedify/vocab";
import type { Context } from "./context.ts";

/**
 * Returns the actor with the given identifier, or `null` when there is
 * none.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export type ActorDispatcher<TContextData> = (
  ctx: Context<TContextData>,
  identifier: string,
) => Actor | null | Promise<Actor | null>;

/**
 * One page of a collection returned by a {@link CollectionDispatcher}.
 * @typeParam TItem The type of the collection's items.
 * @since 0.1.0
 */
export interface PageItems<TItem> {
  /** The items on this page. */
  readonly items: readonly TItem[];
  /** The cursor of the next page, or `null`/absent on the last page. */
  readonly nextCursor?: string | null;
  /** The cursor of the previous page, or `null`/absent on the first page. */
  readonly prevCursor?: string | null;
}

/**
 * Returns one page of an actor's collection: the first page when `cursor`
 * is `null`, or `null` when the actor has no such collection.
 * @typeParam TItem The type of the collection's items.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export type CollectionDispatcher<TItem, TContextData> = (
  ctx: Context<TContextData>,
  identifier: string,
  cursor: string | null,
) => PageItems<TItem> | null | Promise<PageItems<TItem> | null>;

/**
 * Handles one received activity of a given class.
 * @typeParam TContextData The context data type.
 * @typeParam TActivity The activity class the listener was registered for.
 * @since 0.1.0
 */
export type InboxListener<TContextData, TActivity extends Activity> = (
  ctx: Context<TContextData>,
  activity: TActivity,
) => void | Promise<void>;

/**
 * Called when an inbox listener throws, before the failure is retried.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export type InboxErrorHandler<TContextData> = (
  ctx: Context<TContextData>,
  error: Error,
) => void | Promise<void>;

/**
 * The followers collection's item type: anything with an inbox.
 * @since 0.1.0
 */
export type FollowerItem = Recipient;
