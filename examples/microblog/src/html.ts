// The pages a browser gets at the same URLs as the ActivityPub documents:
// plain server-rendered HTML, every value escaped.
import type { Digest, Follower, Post, ReceivedNote } from "./store.ts";

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** A post's plain text as the HTML of a Note's `content`: escaped, links linked. */
export function renderNoteContent(text: string): string {
  const linked = escapeHtml(text).replace(
    /https?:\/\/[^\s<>"']+/g,
    (url) => `<a href="${url}">${url}</a>`,
  );
  return `<p>${linked}</p>`;
}

function page(title: string, body: string): Response {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
article { border-bottom: 1px solid #ddd; padding: .5rem 0; }
.meta { color: #666; font-size: .9em; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}

/** What the profile page shows. */
export interface ProfileView {
  readonly name: string;
  readonly handle: string;
  readonly posts: readonly Post[];
  readonly followers: readonly Follower[];
  readonly following: readonly { readonly id: string; readonly state: string }[];
  /**
   * The received notes to list.  A page has no signed-in viewer, so give it
   * only what anyone may see (`store.listReceivedNotes(name, "anyone")`).
   */
  readonly received: readonly ReceivedNote[];
  /** A URL to each post's own page, by post id. */
  postUrl(post: Post): string;
}

/** The profile page of a local user: posts, followers, following, received notes. */
export function renderProfile(view: ProfileView): Response {
  const posts = view.posts.map((post) => {
    const preview = post.preview == null
      ? ""
      : `<p class="preview">Link preview: <a href="${escapeHtml(post.preview.url)}">${
        escapeHtml(post.preview.title)
      }</a></p>`;
    return `<article class="post">${renderNoteContent(post.content)}${preview}
<p class="meta"><a href="${escapeHtml(view.postUrl(post))}">${escapeHtml(post.published)}</a> · ${
      post.likes ?? 0
    } likes</p></article>`;
  }).join("\n");
  const followers = view.followers.map((follower) =>
    `<li class="follower"><a href="${escapeHtml(follower.id)}">${
      escapeHtml(follower.handle)
    }</a></li>`
  ).join("\n");
  const following = view.following.map((followee) =>
    `<li class="following"><a href="${escapeHtml(followee.id)}">${escapeHtml(followee.id)}</a> (${
      escapeHtml(followee.state)
    })</li>`
  ).join("\n");
  // Note content from other servers is shown as text, never as HTML.
  const received = view.received.map((note) =>
    `<article class="received"><p>${escapeHtml(stripTags(note.content))}</p><p class="meta">from ${
      escapeHtml(note.from)
    }${note.visibility === "public" ? "" : ` · ${note.visibility}`}</p></article>`
  ).join("\n");
  return page(
    `${view.name} (${view.handle})`,
    `<h1>${escapeHtml(view.name)}</h1>
<p class="handle">${escapeHtml(view.handle)}</p>
<h2>Posts (<span id="post-count">${view.posts.length}</span>)</h2>
<section id="posts">${posts || "<p>No posts yet.</p>"}</section>
<h2>Followers (<span id="follower-count">${view.followers.length}</span>)</h2>
<ul id="followers">${followers}</ul>
<h2>Following</h2>
<ul id="following">${following}</ul>
<h2>Received</h2>
<section id="received">${received || "<p>Nothing yet.</p>"}</section>`,
  );
}

/** The page of one post. */
export function renderPost(post: Post, profileUrl: string): Response {
  return page(
    `A post by ${post.author}`,
    `<article class="post">${renderNoteContent(post.content)}</article>
<p class="meta">by <a href="${escapeHtml(profileUrl)}">${escapeHtml(post.author)}</a> · ${
      post.likes ?? 0
    } likes</p>`,
  );
}

/** The home page: the users of this server and the last digest. */
export function renderHome(
  users: readonly { readonly name: string; readonly url: string }[],
  digest: Digest | undefined,
): Response {
  const list = users.map((user) =>
    `<li><a href="${escapeHtml(user.url)}">${escapeHtml(user.name)}</a></li>`
  ).join("\n");
  const summary = digest == null
    ? "<p>No digest yet.</p>"
    : `<p id="digest">Digest of ${
      escapeHtml(digest.at)
    }: ${digest.users} users, ${digest.posts} posts, ${digest.followers} followers.</p>`;
  return page("A Fedwork microblog", `<h1>A Fedwork microblog</h1><ul>${list}</ul>${summary}`);
}

/** A plain page for errors. */
export function renderMessage(status: number, message: string): Response {
  const response = page(message, `<h1>${escapeHtml(message)}</h1>`);
  return new Response(response.body, { status, headers: response.headers });
}

function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}
