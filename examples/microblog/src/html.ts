// The pages a browser gets at the same URLs as the ActivityPub documents,
// and the forms to act as a user: plain server-rendered HTML, every value
// escaped, no script.
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
form { margin: .5rem 0; }
form.inline { display: inline; }
textarea, input[type=text], input[type=url], input[type=password] { width: 100%; box-sizing: border-box; font: inherit; }
textarea { min-height: 4rem; }
.notice { background: #eef6ee; border: 1px solid #9c9; padding: .5rem; }
.notice.failed { background: #fbeeee; border-color: #c99; }
.session { text-align: right; font-size: .9em; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}

/**
 * Who looks at a page, for its forms: a viewer who may act gets the forms,
 * each carrying the session's form token.
 */
export interface PageViewer {
  /** Whether the browser signed in with the API token. */
  readonly signedIn: boolean;
  /** Whether the server has an API token (so that acting needs a sign-in). */
  readonly signInRequired: boolean;
  /** The token every form of the page carries (see `browser-session.ts`). */
  readonly formToken: string;
}

/** Whether a viewer may use the forms: signed in, or on a server without an API token. */
export function mayAct(viewer: PageViewer | undefined): viewer is PageViewer {
  return viewer != null && (viewer.signedIn || !viewer.signInRequired);
}

/** What a form post's redirect tells the profile page (`?notice=`), in fixed words. */
export const NOTICES = {
  posted: "Posted.",
  followed: "Follow sent; it shows as accepted once the other server answers.",
  unfollowed: "Unfollow sent.",
  liked: "Like sent.",
  failed: "That did not work: the other server could not be reached, or the handle or URL is " +
    "not an account or a note there.",
} as const;

/** One of {@link NOTICES}. */
export type NoticeCode = keyof typeof NOTICES;

/** A form that posts to the app, with its token. */
function form(
  action: string,
  viewer: PageViewer,
  body: string,
  attributes = "",
): string {
  return `<form method="post" action="${escapeHtml(action)}"${attributes}>` +
    `<input type="hidden" name="csrf" value="${escapeHtml(viewer.formToken)}">${body}</form>`;
}

/** The sign-in or sign-out line at the top of a page. */
function sessionLine(viewer: PageViewer | undefined): string {
  if (viewer == null || !viewer.signInRequired) return "";
  return viewer.signedIn
    ? `<div class="session">Signed in · ${
      form("/logout", viewer, `<button type="submit">Sign out</button>`, ` class="inline"`)
    }</div>`
    : `<div class="session"><a href="/login">Sign in</a> to post, follow and like.</div>`;
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
  /** Who looks, for the forms; no forms without one. */
  readonly viewer?: PageViewer;
  /** What the last form post did, from the redirect's `?notice=`. */
  readonly notice?: NoticeCode;
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
  const viewer = mayAct(view.viewer) ? view.viewer : undefined;
  const forms = `/forms/${encodeURIComponent(view.name)}`;
  const following = view.following.map((followee) =>
    `<li class="following"><a href="${escapeHtml(followee.id)}">${escapeHtml(followee.id)}</a> (${
      escapeHtml(followee.state)
    })${
      viewer == null ? "" : ` ${
        form(
          `${forms}/unfollow`,
          viewer,
          `<input type="hidden" name="target" value="${
            escapeHtml(followee.id)
          }"><button type="submit">Unfollow</button>`,
          ` class="inline unfollow"`,
        )
      }`
    }</li>`
  ).join("\n");
  // Note content from other servers is shown as text, never as HTML.
  const received = view.received.map((note) =>
    `<article class="received" data-id="${escapeHtml(note.id)}"><p>${
      escapeHtml(stripTags(note.content))
    }</p><p class="meta">from ${escapeHtml(note.from)}${
      note.visibility === "public" ? "" : ` · ${note.visibility}`
    }${
      viewer == null ? "" : ` ${
        form(
          `${forms}/like`,
          viewer,
          `<input type="hidden" name="object" value="${
            escapeHtml(note.id)
          }"><button type="submit">Like</button>`,
          ` class="inline like"`,
        )
      }`
    }</p></article>`
  ).join("\n");
  const notice = view.notice == null
    ? ""
    : `<p id="notice" role="status" class="notice${view.notice === "failed" ? " failed" : ""}">${
      escapeHtml(NOTICES[view.notice])
    }</p>`;
  const actions = viewer == null ? "" : `
${
    form(
      `${forms}/posts`,
      viewer,
      `<label for="compose-content">New note</label>
<textarea id="compose-content" name="content" maxlength="5000" required></textarea>
<button type="submit">Post</button>`,
      ` id="compose"`,
    )
  }
${
    form(
      `${forms}/follow`,
      viewer,
      `<label for="follow-target">Follow an account</label>
<input type="text" id="follow-target" name="target" maxlength="2048" required placeholder="@user@host" autocomplete="off">
<button type="submit">Follow</button>`,
      ` id="follow"`,
    )
  }
${
    form(
      `${forms}/like`,
      viewer,
      `<label for="like-object">Like a note by its URL</label>
<input type="url" id="like-object" name="object" maxlength="2048" required placeholder="https://host/…">
<button type="submit">Like</button>`,
      ` id="like"`,
    )
  }`;
  return page(
    `${view.name} (${view.handle})`,
    `${sessionLine(view.viewer)}<h1>${escapeHtml(view.name)}</h1>
<p class="handle">${escapeHtml(view.handle)}</p>${notice}${actions}
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
  viewer?: PageViewer,
): Response {
  const list = users.map((user) =>
    `<li><a href="${escapeHtml(user.url)}">${escapeHtml(user.name)}</a></li>`
  ).join("\n");
  const summary = digest == null
    ? "<p>No digest yet.</p>"
    : `<p id="digest">Digest of ${
      escapeHtml(digest.at)
    }: ${digest.users} users, ${digest.posts} posts, ${digest.followers} followers.</p>`;
  return page(
    "A Fedwork microblog",
    `${sessionLine(viewer)}<h1>A Fedwork microblog</h1><ul>${list}</ul>${summary}`,
  );
}

/** What the sign-in page shows. */
export interface LoginView {
  readonly viewer: PageViewer;
  /** Why the last attempt failed, in fixed words. */
  readonly error?: string;
}

/**
 * The sign-in page: the API token, once, for an HttpOnly cookie.  On a
 * server without an API token it says that there is nothing to sign in to,
 * and what that means.
 */
export function renderLogin(view: LoginView, status = 200): Response {
  const { viewer } = view;
  const body = !viewer.signInRequired
    ? `<p id="no-token">This server has no <code>API_TOKEN</code>: anyone who can reach it can post,
follow and like as any of its users, without signing in. Set <code>API_TOKEN</code> to a long random
secret before anyone else can reach the port.</p>`
    : viewer.signedIn
    ? `<p>You are signed in.</p>${
      form("/logout", viewer, `<button type="submit">Sign out</button>`)
    }`
    : `${
      view.error == null
        ? ""
        : `<p id="login-error" class="notice failed" role="alert">${escapeHtml(view.error)}</p>`
    }${
      form(
        "/login",
        viewer,
        `<label for="login-token">API token</label>
<input type="password" id="login-token" name="token" required autocomplete="current-password">
<button type="submit">Sign in</button>`,
        ` id="login"`,
      )
    }`;
  const response = page("Sign in", `<h1>Sign in</h1>${body}`);
  return new Response(response.body, { status, headers: response.headers });
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
