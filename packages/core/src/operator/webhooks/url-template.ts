// Webhook URL templates: `https://ops.example/jobs/{taskId}/done` names,
// in its path or query, fields of the event it is POSTed for.  addWebhook()
// checks the template once; each request fills it in, every value encoded
// as one URL component, so that a task name such as `fedwork:delivery` or
// an id with a slash cannot change the URL's shape.

/**
 * The placeholders a webhook URL may hold, and the field of the event each
 * stands for: `taskId` (`task.id`), `taskName` (`task.name`), `attempt`
 * (`task.attempt`), `event` (`type`), `eventId` (`id`) and `webhookId`.
 * @since 0.4.0
 */
export const WEBHOOK_URL_PLACEHOLDERS = Object.freeze(
  ["taskId", "taskName", "attempt", "event", "eventId", "webhookId"] as const,
);

/** One of {@link WEBHOOK_URL_PLACEHOLDERS}. */
type WebhookUrlPlaceholder = (typeof WEBHOOK_URL_PLACEHOLDERS)[number];

/** What a placeholder looks like: braces around a name, or their percent-encoded form. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}|%7B([A-Za-z_][A-Za-z0-9_]*)%7D/gi;

const KNOWN = new Set<string>(WEBHOOK_URL_PLACEHOLDERS);

/**
 * Checks the placeholders of a webhook URL and returns the URL as it is
 * stored: its `href`, with each placeholder written `{name}` (the URL
 * parser percent-encodes braces in a path; a URL object given with
 * `%7BtaskId%7D` means the same).  Internal.
 * @param url The parsed URL.
 * @returns The URL text to store.
 * @throws {TypeError} When a placeholder is unknown, or stands in the host
 *         or the fragment.
 * @since 0.4.0
 */
export function checkWebhookUrlTemplate(url: URL): string {
  for (const [part, text] of [["host", url.host], ["fragment", url.hash]] as const) {
    // The host's braces stay braces; a fragment is never sent.
    if (/[{}]|%7B|%7D/i.test(text)) {
      throw new TypeError(
        `The url of addWebhook() has a placeholder or a brace in its ${part}; placeholders ` +
          "may stand in the path and the query only.",
      );
    }
  }
  const href = url.href.replace(PLACEHOLDER, (_, braced, encoded) => `{${braced ?? encoded}}`);
  for (const match of href.matchAll(PLACEHOLDER)) {
    const name = match[1];
    if (!KNOWN.has(name)) {
      throw new TypeError(
        `The url of addWebhook() has an unknown placeholder {${name}}; the placeholders are ` +
          `${WEBHOOK_URL_PLACEHOLDERS.map((known) => `{${known}}`).join(", ")}.`,
      );
    }
  }
  return href;
}

/**
 * The values a webhook request fills its URL's placeholders with.  Internal.
 * @since 0.4.0
 */
export type WebhookUrlValues = Readonly<Record<WebhookUrlPlaceholder, string>>;

/**
 * Fills in a stored webhook URL's placeholders, each value encoded with
 * `encodeURIComponent()`.  A URL without placeholders is parsed as it is.
 * Internal.
 * @param template The stored URL (see {@link checkWebhookUrlTemplate}).
 * @param values The request's values.
 * @returns The URL to POST to.
 * @throws {TypeError} When a value in the path is `.` or `..`, which URL
 *         parsing would resolve into another path (no encoding of the dots
 *         escapes that).
 * @since 0.4.0
 */
export function expandWebhookUrl(template: string, values: WebhookUrlValues): URL {
  const query = template.indexOf("?", template.indexOf("//") + 2);
  return new URL(
    template.replace(PLACEHOLDER, (whole, name: string | undefined, _encoded, offset: number) => {
      // Stored before templates existed: as it was, literally.
      if (name == null || !KNOWN.has(name)) return whole;
      const value = values[name as WebhookUrlPlaceholder];
      if ((query < 0 || offset < query) && (value === "." || value === "..")) {
        throw new TypeError(
          `The webhook URL's {${name}} is ${JSON.stringify(value)}, which would change its path.`,
        );
      }
      return encodeURIComponent(value);
    }),
  );
}

/**
 * The placeholder values of one request, read from its event's JSON body
 * (written by the federation; a field it lacks is empty).  Internal.
 * @param webhookId The webhook's id.
 * @param eventId The event's id.
 * @param eventType The event's type.
 * @param body The request body.
 * @returns The values.
 * @since 0.4.0
 */
export function webhookUrlValues(
  webhookId: string,
  eventId: string,
  eventType: string,
  body: string,
): WebhookUrlValues {
  let task: { id?: unknown; name?: unknown; attempt?: unknown } = {};
  try {
    const parsed = JSON.parse(body) as { task?: typeof task };
    if (typeof parsed?.task === "object" && parsed.task != null) task = parsed.task;
  } catch {
    // Not ours to judge here: the request goes out with empty values.
  }
  const text = (value: unknown) =>
    typeof value === "string" || typeof value === "number" ? String(value) : "";
  return {
    taskId: text(task.id),
    taskName: text(task.name),
    attempt: text(task.attempt),
    event: eventType,
    eventId,
    webhookId,
  };
}
