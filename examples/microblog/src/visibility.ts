// Who may see a note, read from how it is addressed.  Public and unlisted
// notes may be shown to anyone; followers-only and direct notes only to the
// people they were addressed to, which on this server means the recipient
// (through the authenticated API), never a page or API answer for anyone.
import { type Note, PUBLIC_COLLECTION } from "@fedify/vocab";

/**
 * How a note is addressed: to the Public collection (`public`), with it in
 * `cc` only (`unlisted`), to a collection such as the author's followers
 * (`followers`), or to the recipient by name (`direct`).
 */
export type Visibility = "public" | "unlisted" | "followers" | "direct";

/** Who is looking: the owner of the data (authenticated), or anyone. */
export type Audience = "owner" | "anyone";

/**
 * Reads a received note's visibility from its addressing.
 * @param note The note as it arrived.
 * @param recipient The actor URI of the local user it was delivered to.
 * @returns Its visibility: `public` or `unlisted` only when the Public
 *          collection is among its addressees.
 */
export function noteVisibility(note: Note, recipient: URL): Visibility {
  // JSON-LD expansion has already turned a peer's "as:Public" into the
  // full id; anything else ("Public" alone expands to a relative URL) is
  // not public, which errs on the side of hiding.
  const isPublic = (ids: readonly URL[]) => ids.some((id) => id.href === PUBLIC_COLLECTION.href);
  if (isPublic(note.toIds)) return "public";
  if (isPublic(note.ccIds)) return "unlisted";
  // Not public: whether it names the recipient or reached them through a
  // collection only changes the label, never who may see it.
  const named = [...note.toIds, ...note.ccIds, ...note.btoIds, ...note.bccIds]
    .some((id) => id.href === recipient.href);
  return named ? "direct" : "followers";
}

/**
 * Tells whether an audience may see a note of a visibility.
 * @param visibility The note's visibility.
 * @param audience Who is looking.
 * @returns `true` for public and unlisted notes, and for any note its owner
 *          looks at.
 */
export function isVisibleTo(visibility: Visibility, audience: Audience): boolean {
  return audience === "owner" || visibility === "public" || visibility === "unlisted";
}
