// What a user can do, through the JSON API or the HTML forms alike: the
// field each action takes, its longest length, and carrying it out.
import { Note } from "@fedify/vocab";
import type { Microblog } from "./federation.ts";

/** The actions, by the name they have in the API's and the forms' URLs. */
export const ACTIONS = {
  posts: { field: "content", maxLength: 5_000 },
  follow: { field: "target", maxLength: 2_048 },
  unfollow: { field: "target", maxLength: 2_048 },
  like: { field: "object", maxLength: 2_048 },
  // One account a line (a handle or an actor URL), at most 100 of them.
  "import-follows": { field: "accounts", maxLength: 20_000 },
} as const;

/** Actions the JSON API offers but the HTML forms do not. */
export const API_ONLY_ACTIONS: ReadonlySet<ActionName> = new Set<ActionName>(["import-follows"]);

/** One of {@link ACTIONS}. */
export type ActionName = keyof typeof ACTIONS;

/** Whether a URL segment names an action. */
export function isActionName(name: string): name is ActionName {
  return Object.hasOwn(ACTIONS, name);
}

/**
 * Checks an action's one field.
 * @returns The value, or `undefined` when it is not a non-blank string
 *          within the action's length.
 */
export function actionValue(action: ActionName, value: unknown): string | undefined {
  return typeof value !== "string" || value.trim() === "" ||
      value.length > ACTIONS[action].maxLength
    ? undefined
    : value;
}

/** What an action did: the API answers it as JSON. */
export type ActionResult =
  | { readonly action: "posts"; readonly post: Record<string, unknown> }
  | { readonly action: "follow"; readonly following: string }
  | { readonly action: "unfollow"; readonly unfollowed: string }
  | { readonly action: "like"; readonly liked: string }
  | { readonly action: "import-follows"; readonly importing: string };

/**
 * Carries out an action of a local user.
 * @param app The app.
 * @param user The local user (who must exist).
 * @param action The action.
 * @param value Its field's checked value.
 * @returns What it did.
 * @throws {Error} When another server is involved and the lookup or the
 *         delivery fails (follow, unfollow, like), or an import lists no
 *         account or too many.
 */
export async function runAction(
  app: Microblog,
  user: string,
  action: ActionName,
  value: string,
): Promise<ActionResult> {
  switch (action) {
    case "posts": {
      const post = await app.post(user, value);
      const url = app.federation.createContext(app.origin, undefined)
        .getObjectUri(Note, { identifier: user, id: post.id }).href;
      return { action, post: { ...post, url } };
    }
    case "follow":
      return { action, following: await app.follow(user, value) };
    case "unfollow":
      await app.unfollow(user, value);
      return { action, unfollowed: value };
    case "like":
      await app.like(user, value);
      return { action, liked: value };
    case "import-follows":
      return { action, importing: await app.importFollows(user, value) };
  }
}
