// The microblog's own data (users, keys, follows, posts, what arrived), kept
// as JSON values in a SqliteKvStore: one file, the runtime's built-in SQLite,
// nothing to configure, and shared safely by a web and a worker process.
import type { KvKey, KvStore } from "@fedwork/core";
import { type Audience, isVisibleTo, type Visibility } from "./visibility.ts";

/** A local user. */
export interface User {
  readonly name: string;
  readonly createdAt: string;
  /** The RSA and Ed25519 key pairs, as JWKs. */
  readonly keys: readonly { readonly privateKey: JsonWebKey; readonly publicKey: JsonWebKey }[];
}

/** A post a local user wrote. */
export interface Post {
  readonly id: string;
  readonly author: string;
  readonly content: string;
  readonly published: string;
  /** The <title> of the first linked page, once the link-preview task ran. */
  readonly preview?: { readonly url: string; readonly title: string };
  /** How many likes it has, as the refresh-counts task last counted. */
  readonly likes?: number;
}

/** A remote actor who follows a local user. */
export interface Follower {
  readonly id: string;
  readonly inbox: string;
  readonly handle: string;
}

/** A remote actor a local user follows. */
export interface Following {
  readonly id: string;
  /** "pending" until the Accept arrives. */
  readonly state: "pending" | "accepted";
  /** The id of the Follow sent, for its Undo. */
  readonly followId: string;
}

/** A note delivered to a local user. */
export interface ReceivedNote {
  readonly id: string;
  readonly from: string;
  readonly content: string;
  /**
   * How it was addressed; only `public` and `unlisted` notes are shown to
   * anyone but the recipient.
   */
  readonly visibility: Visibility;
  readonly receivedAt: string;
}

/** What a digest run recorded. */
export interface Digest {
  readonly at: string;
  readonly users: number;
  readonly posts: number;
  readonly followers: number;
}

/**
 * The app's data.  Keys are sortable (timestamps first) so listings come in
 * order.
 */
export class Store {
  readonly #kv: KvStore;

  /** @param kv Where the values live (a `SqliteKvStore` in the example). */
  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  async #list<T>(prefix: KvKey): Promise<T[]> {
    const values: T[] = [];
    for await (const entry of this.#kv.list(prefix)) values.push(entry.value as T);
    return values;
  }

  /** A local user, or `undefined`. */
  getUser(name: string): Promise<User | undefined> {
    return this.#kv.get<User>(["users", name]);
  }

  /** Creates or replaces a local user. */
  saveUser(user: User): Promise<void> {
    return this.#kv.set(["users", user.name], user);
  }

  /** Every local user, by name. */
  listUsers(): Promise<User[]> {
    return this.#list(["users"]);
  }

  /** Records a remote follower of `user`. */
  addFollower(user: string, follower: Follower): Promise<void> {
    return this.#kv.set(["followers", user, follower.id], follower);
  }

  /** Forgets a follower (after an Undo of their Follow). */
  removeFollower(user: string, followerId: string): Promise<void> {
    return this.#kv.delete(["followers", user, followerId]);
  }

  /** The followers of `user`, by actor id. */
  listFollowers(user: string): Promise<Follower[]> {
    return this.#list(["followers", user]);
  }

  /** Records that `user` follows `actorId`: "pending" until the Accept. */
  setFollowing(
    user: string,
    actorId: string,
    state: Following["state"],
    followId: string,
  ): Promise<void> {
    return this.#kv.set(["following", user, actorId], { id: actorId, state, followId });
  }

  /** Forgets that `user` follows `actorId`. */
  removeFollowing(user: string, actorId: string): Promise<void> {
    return this.#kv.delete(["following", user, actorId]);
  }

  /** Whom `user` follows, by actor id. */
  listFollowing(user: string): Promise<Following[]> {
    return this.#list(["following", user]);
  }

  /** A post of a local user, or `undefined`. */
  getPost(author: string, id: string): Promise<Post | undefined> {
    return this.#kv.get<Post>(["posts", author, id]);
  }

  /** Creates or replaces a post. */
  savePost(post: Post): Promise<void> {
    return this.#kv.set(["posts", post.author, post.id], post);
  }

  /** The posts of `author`, newest first. */
  async listPosts(author: string): Promise<Post[]> {
    return (await this.#list<Post>(["posts", author])).reverse();
  }

  /** Records that `actorId` likes a post (once per actor). */
  addLike(author: string, postId: string, actorId: string): Promise<void> {
    return this.#kv.set(["likes", author, postId, actorId], actorId);
  }

  /** How many actors like a post. */
  async countLikes(author: string, postId: string): Promise<number> {
    return (await this.#list(["likes", author, postId])).length;
  }

  /** Records a note delivered to `user`. */
  addReceivedNote(user: string, note: ReceivedNote): Promise<void> {
    return this.#kv.set(["received", user, note.receivedAt, note.id], note);
  }

  /**
   * The notes delivered to `user` that `audience` may see, oldest first:
   * followers-only and direct notes only for `"owner"`.
   */
  async listReceivedNotes(user: string, audience: Audience): Promise<ReceivedNote[]> {
    const notes = await this.#list<ReceivedNote & { readonly direct?: boolean }>([
      "received",
      user,
    ]);
    return notes
      // Notes stored before visibility was recorded have `direct` only,
      // which was true for anything not addressed to the Public collection.
      .map(({ direct, ...note }) => ({
        ...note,
        visibility: note.visibility ?? (direct === false ? "public" : "direct"),
      }))
      .filter((note) => isVisibleTo(note.visibility, audience));
  }

  /** Keeps the last digest. */
  saveDigest(digest: Digest): Promise<void> {
    return this.#kv.set(["digest"], digest);
  }

  /** The last digest, if one ran. */
  getDigest(): Promise<Digest | undefined> {
    return this.#kv.get<Digest>(["digest"]);
  }
}

/** A post id that sorts by creation time. */
export function newPostId(): string {
  return `${Date.now().toString(36).padStart(9, "0")}-${crypto.randomUUID().slice(0, 8)}`;
}
