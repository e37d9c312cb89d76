// Documents shaped as real servers send them (contexts, nesting, the fields
// they carry), for the document limits' tests and the hostile-peer
// benchmark: each must pass the default limits with room to spare.
const AS = "https://www.w3.org/ns/activitystreams";
const SEC = "https://w3id.org/security/v1";

/** Mastodon 4's inline context extension, as in its activities. */
const MASTODON_CONTEXT = {
  ostatus: "http://ostatus.org#",
  atomUri: "ostatus:atomUri",
  inReplyToAtomUri: "ostatus:inReplyToAtomUri",
  conversation: "ostatus:conversation",
  sensitive: "as:sensitive",
  toot: "http://joinmastodon.org/ns#",
  votersCount: "toot:votersCount",
  blurhash: "toot:blurhash",
  focalPoint: { "@container": "@list", "@id": "toot:focalPoint" },
  Hashtag: "as:Hashtag",
  Emoji: "toot:Emoji",
  featured: { "@id": "toot:featured", "@type": "@id" },
  featuredTags: { "@id": "toot:featuredTags", "@type": "@id" },
  alsoKnownAs: { "@id": "as:alsoKnownAs", "@type": "@id" },
  movedTo: { "@id": "as:movedTo", "@type": "@id" },
  schema: "http://schema.org#",
  PropertyValue: "schema:PropertyValue",
  value: "schema:value",
  discoverable: "toot:discoverable",
  suspended: "toot:suspended",
  memorial: "toot:memorial",
  indexable: "toot:indexable",
  attributionDomains: { "@id": "toot:attributionDomains", "@type": "@id" },
};

function mastodonNote(i: number) {
  const id = `https://mastodon.example/users/alice/statuses/${1000 + i}`;
  return {
    id,
    type: "Note",
    summary: null,
    inReplyTo: null,
    published: "2026-11-30T12:00:00Z",
    url: `https://mastodon.example/@alice/${1000 + i}`,
    attributedTo: "https://mastodon.example/users/alice",
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    cc: ["https://mastodon.example/users/alice/followers", "https://remote.example/users/bob"],
    sensitive: false,
    atomUri: id,
    conversation: `tag:mastodon.example,2026-11-30:objectId=${i}:objectType=Conversation`,
    content: '<p>Hello <span class="h-card"><a href="https://remote.example/@bob">@bob</a>' +
      '</span>, see <a href="https://mastodon.example/tags/fediverse">#fediverse</a></p>',
    contentMap: { en: "<p>Hello @bob, see #fediverse</p>" },
    attachment: [{
      type: "Document",
      mediaType: "image/png",
      url: "https://mastodon.example/system/media/1.png",
      name: "A picture",
      blurhash: "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH",
      focalPoint: [0, 0],
      width: 800,
      height: 600,
    }],
    tag: [
      { type: "Mention", href: "https://remote.example/users/bob", name: "@bob@remote.example" },
      {
        type: "Hashtag",
        href: "https://mastodon.example/tags/fediverse",
        name: "#fediverse",
      },
      {
        id: "https://mastodon.example/emojis/1",
        type: "Emoji",
        name: ":blobcat:",
        updated: "2026-01-01T00:00:00Z",
        icon: { type: "Image", mediaType: "image/png", url: "https://mastodon.example/e.png" },
      },
    ],
    replies: {
      id: `${id}/replies`,
      type: "Collection",
      first: {
        type: "CollectionPage",
        next: `${id}/replies?only_other_accounts=true&page=true`,
        partOf: `${id}/replies`,
        items: [],
      },
    },
  };
}

/** A Mastodon `Create` of a note, with its Linked Data signature. */
export const mastodonCreate = {
  "@context": [AS, SEC, MASTODON_CONTEXT],
  id: "https://mastodon.example/users/alice/statuses/1000/activity",
  type: "Create",
  actor: "https://mastodon.example/users/alice",
  published: "2026-11-30T12:00:00Z",
  to: ["https://www.w3.org/ns/activitystreams#Public"],
  cc: ["https://mastodon.example/users/alice/followers"],
  object: mastodonNote(0),
  signature: {
    type: "RsaSignature2017",
    creator: "https://mastodon.example/users/alice#main-key",
    created: "2026-11-30T12:00:01Z",
    signatureValue: "A".repeat(344),
  },
};

/** A Mastodon outbox page: twenty `Create`s with their notes. */
export const mastodonOutboxPage = {
  "@context": [AS, SEC, MASTODON_CONTEXT],
  id: "https://mastodon.example/users/alice/outbox?page=true",
  type: "OrderedCollectionPage",
  next: "https://mastodon.example/users/alice/outbox?max_id=1&page=true",
  prev: "https://mastodon.example/users/alice/outbox?min_id=20&page=true",
  partOf: "https://mastodon.example/users/alice/outbox",
  orderedItems: Array.from({ length: 20 }, (_, i) => ({
    id: `https://mastodon.example/users/alice/statuses/${1000 + i}/activity`,
    type: "Create",
    actor: "https://mastodon.example/users/alice",
    published: "2026-11-30T12:00:00Z",
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    cc: ["https://mastodon.example/users/alice/followers"],
    object: mastodonNote(i),
  })),
};

/** A Misskey note's `Create`, with Misskey's inline context. */
export const misskeyCreate = {
  "@context": [AS, SEC, {
    Key: "sec:Key",
    manuallyApprovesFollowers: "as:manuallyApprovesFollowers",
    sensitive: "as:sensitive",
    Hashtag: "as:Hashtag",
    quoteUrl: "as:quoteUrl",
    toot: "http://joinmastodon.org/ns#",
    Emoji: "toot:Emoji",
    featured: "toot:featured",
    discoverable: "toot:discoverable",
    schema: "http://schema.org#",
    PropertyValue: "schema:PropertyValue",
    value: "schema:value",
    misskey: "https://misskey-hub.net/ns#",
    _misskey_content: "misskey:_misskey_content",
    _misskey_quote: "misskey:_misskey_quote",
    _misskey_reaction: "misskey:_misskey_reaction",
    _misskey_votes: "misskey:_misskey_votes",
    _misskey_summary: "misskey:_misskey_summary",
    _misskey_followedMessage: "misskey:_misskey_followedMessage",
    _misskey_requireSigninToViewContents: "misskey:_misskey_requireSigninToViewContents",
    _misskey_makeNotesFollowersOnlyBefore: "misskey:_misskey_makeNotesFollowersOnlyBefore",
    _misskey_makeNotesHiddenBefore: "misskey:_misskey_makeNotesHiddenBefore",
    _misskey_license: "misskey:_misskey_license",
    freeText: { "@id": "misskey:freeText", "@type": "schema:text" },
    isCat: "misskey:isCat",
    firefish: "https://joinfirefish.org/ns#",
    speakAsCat: "firefish:speakAsCat",
    sharkey: "https://joinsharkey.org/ns#",
    hideOnlineStatus: "sharkey:hideOnlineStatus",
    backgroundUrl: "sharkey:backgroundUrl",
    listenbrainz: "sharkey:listenbrainz",
    enableRss: "sharkey:enableRss",
    vcard: "http://www.w3.org/2006/vcard/ns#",
  }],
  id: "https://misskey.example/notes/9x1/activity",
  actor: "https://misskey.example/users/9a1",
  type: "Create",
  published: "2026-11-30T12:00:00.000Z",
  object: {
    id: "https://misskey.example/notes/9x1",
    type: "Note",
    attributedTo: "https://misskey.example/users/9a1",
    content: "<p>hello :misskey:</p>",
    _misskey_content: "hello :misskey:",
    source: { content: "hello :misskey:", mediaType: "text/x.misskeymarkdown" },
    published: "2026-11-30T12:00:00.000Z",
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    cc: ["https://misskey.example/users/9a1/followers"],
    inReplyTo: null,
    attachment: [],
    sensitive: false,
    tag: [{
      id: "https://misskey.example/emojis/misskey",
      type: "Emoji",
      name: ":misskey:",
      updated: "2026-01-01T00:00:00.000Z",
      icon: { type: "Image", mediaType: "image/png", url: "https://misskey.example/e.png" },
    }],
  },
  to: ["https://www.w3.org/ns/activitystreams#Public"],
  cc: ["https://misskey.example/users/9a1/followers"],
};

/** A Pleroma `Create`: its remote litepub context and a language entry. */
export const pleromaCreate = {
  "@context": [AS, "https://pleroma.example/schemas/litepub-0.1.jsonld", { "@language": "und" }],
  actor: "https://pleroma.example/users/carol",
  cc: ["https://pleroma.example/users/carol/followers"],
  context: "https://pleroma.example/contexts/1",
  directMessage: false,
  id: "https://pleroma.example/activities/1",
  object: {
    actor: "https://pleroma.example/users/carol",
    attachment: [],
    attributedTo: "https://pleroma.example/users/carol",
    cc: ["https://pleroma.example/users/carol/followers"],
    content: "hello from pleroma",
    context: "https://pleroma.example/contexts/1",
    conversation: "https://pleroma.example/contexts/1",
    id: "https://pleroma.example/objects/1",
    published: "2026-11-30T12:00:00.000Z",
    sensitive: null,
    source: { content: "hello from pleroma", mediaType: "text/plain" },
    summary: "",
    tag: [],
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    type: "Note",
  },
  published: "2026-11-30T12:00:00.000Z",
  to: ["https://www.w3.org/ns/activitystreams#Public"],
  type: "Create",
};

/** A GoToSocial `Create`: URL contexts only. */
export const gotosocialCreate = {
  "@context": ["https://gotosocial.org/ns", AS, SEC],
  actor: "https://gts.example/users/dave",
  cc: "https://gts.example/users/dave/followers",
  id: "https://gts.example/users/dave/statuses/01J/activity",
  object: {
    attachment: [],
    attributedTo: "https://gts.example/users/dave",
    cc: "https://gts.example/users/dave/followers",
    content: "<p>hello from gotosocial</p>",
    contentMap: { en: "<p>hello from gotosocial</p>" },
    id: "https://gts.example/users/dave/statuses/01J",
    interactionPolicy: {
      canAnnounce: {
        always: ["https://www.w3.org/ns/activitystreams#Public"],
        approvalRequired: [],
      },
      canLike: { always: ["https://www.w3.org/ns/activitystreams#Public"], approvalRequired: [] },
      canReply: { always: ["https://www.w3.org/ns/activitystreams#Public"], approvalRequired: [] },
    },
    published: "2026-11-30T12:00:00Z",
    replies: "https://gts.example/users/dave/statuses/01J/replies",
    sensitive: false,
    summary: "",
    tag: [],
    to: "https://www.w3.org/ns/activitystreams#Public",
    type: "Note",
    url: "https://gts.example/@dave/statuses/01J",
  },
  published: "2026-11-30T12:00:00Z",
  to: "https://www.w3.org/ns/activitystreams#Public",
  type: "Create",
};

/** A Fedify 2 actor with both kinds of keys, as Fedify serves it. */
export const fedifyActor = {
  "@context": [
    AS,
    SEC,
    "https://w3id.org/security/data-integrity/v1",
    "https://www.w3.org/ns/did/v1",
    "https://w3id.org/security/multikey/v1",
    {
      alsoKnownAs: { "@id": "as:alsoKnownAs", "@type": "@id" },
      manuallyApprovesFollowers: "as:manuallyApprovesFollowers",
      movedTo: { "@id": "as:movedTo", "@type": "@id" },
      featured: { "@id": "toot:featured", "@type": "@id" },
      featuredTags: { "@id": "toot:featuredTags", "@type": "@id" },
      discoverable: "toot:discoverable",
      suspended: "toot:suspended",
      memorial: "toot:memorial",
      indexable: "toot:indexable",
      schema: "http://schema.org#",
      PropertyValue: "schema:PropertyValue",
      value: "schema:value",
      toot: "http://joinmastodon.org/ns#",
      Emoji: "toot:Emoji",
    },
  ],
  id: "https://fedify.example/users/erin",
  type: "Person",
  preferredUsername: "erin",
  name: "Erin",
  summary: "<p>Built with Fedify</p>",
  url: "https://fedify.example/@erin",
  inbox: "https://fedify.example/users/erin/inbox",
  outbox: "https://fedify.example/users/erin/outbox",
  following: "https://fedify.example/users/erin/following",
  followers: "https://fedify.example/users/erin/followers",
  endpoints: { type: "as:Endpoints", sharedInbox: "https://fedify.example/inbox" },
  publicKey: {
    id: "https://fedify.example/users/erin#main-key",
    type: "CryptographicKey",
    owner: "https://fedify.example/users/erin",
    publicKeyPem: `-----BEGIN PUBLIC KEY-----\n${"A".repeat(392)}\n-----END PUBLIC KEY-----\n`,
  },
  assertionMethod: [
    {
      id: "https://fedify.example/users/erin#main-key",
      type: "Multikey",
      controller: "https://fedify.example/users/erin",
      publicKeyMultibase: `z${"A".repeat(540)}`,
    },
    {
      id: "https://fedify.example/users/erin#key-2",
      type: "Multikey",
      controller: "https://fedify.example/users/erin",
      publicKeyMultibase: "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2",
    },
  ],
  attachment: [{ type: "PropertyValue", name: "Website", value: "<a>fedify.example</a>" }],
};

/** Each real-server document by name. */
export const SERVER_DOCUMENTS: Readonly<Record<string, Record<string, unknown>>> = {
  "Mastodon Create (LD-signed)": mastodonCreate,
  "Mastodon outbox page (20 items)": mastodonOutboxPage,
  "Misskey Create": misskeyCreate,
  "Pleroma Create": pleromaCreate,
  "GoToSocial Create": gotosocialCreate,
  "Fedify actor": fedifyActor,
};
