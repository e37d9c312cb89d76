// The one way a failure is written down for operators: the failed-task
// record, the status record and the webhook payload of one failure all
// show the same name and message, cut to the same length.

/**
 * An error as Fedwork keeps and sends it: in a failed or completed task
 * record (`TaskRecord.error`), in a status record (`TaskStatus.error`) and
 * in a webhook payload (`WebhookTaskInfo.error`).  Plain strings, so that
 * it survives JSON and can be read days later.
 * @since 0.4.0
 */
export interface ErrorDescription {
  /**
   * The error's `name`, e.g. `"TypeError"`; for a thrown value that is
   * not an `Error`, its `typeof` (`"string"`, `"object"`, …).
   */
  readonly name: string;
  /**
   * The error's message (a thrown value that is not an `Error`, as
   * `String(value)`), cut to {@link MAX_ERROR_MESSAGE_LENGTH} characters
   * with an ellipsis.
   */
  readonly message: string;
  /**
   * The stack trace, when the error had one and the place keeps stacks:
   * task records do; status records and webhook payloads, which are
   * published to other processes and servers, do not.
   */
  readonly stack?: string;
}

/**
 * The longest error message {@link describeError} keeps, in characters.
 * @since 0.4.0
 */
export const MAX_ERROR_MESSAGE_LENGTH = 1000;

/**
 * Options for {@link describeError}.
 * @since 0.4.0
 */
export interface DescribeErrorOptions {
  /**
   * Whether to keep the error's stack trace.
   * @default false
   */
  readonly stack?: boolean;
}

/**
 * Describes anything thrown as an {@link ErrorDescription}: its name and
 * message (cut to {@link MAX_ERROR_MESSAGE_LENGTH} characters) and, when
 * asked, its stack.
 * @param error Anything thrown.
 * @param options Whether to keep the stack.
 * @returns The description.
 * @since 0.4.0
 */
export function describeError(
  error: unknown,
  options: DescribeErrorOptions = {},
): ErrorDescription {
  if (error instanceof Error) {
    const description: { name: string; message: string; stack?: string } = {
      name: String(error.name),
      message: cut(String(error.message)),
    };
    if (options.stack === true && typeof error.stack === "string") description.stack = error.stack;
    return description;
  }
  return { name: typeof error, message: cut(safeString(error)) };
}

/**
 * Reads an error description back from a stored or received record,
 * tolerating the shape of earlier versions: a status record written before
 * 0.4.0 kept its error as one string, `"Name: message"`.
 * @param value The stored value.
 * @returns The description, or `undefined` when the value is none.
 * @since 0.4.0
 */
export function readErrorDescription(value: unknown): ErrorDescription | undefined {
  if (typeof value === "string") {
    const match = /^([A-Za-z_$][\w$]*): ([\s\S]*)$/.exec(value);
    return match == null
      ? { name: "Error", message: value }
      : { name: match[1], message: match[2] };
  }
  if (value == null || typeof value !== "object") return undefined;
  const v = value as Partial<Record<keyof ErrorDescription, unknown>>;
  if (typeof v.name !== "string" || typeof v.message !== "string") return undefined;
  return typeof v.stack === "string"
    ? { name: v.name, message: v.message, stack: v.stack }
    : { name: v.name, message: v.message };
}

function cut(text: string): string {
  return text.length > MAX_ERROR_MESSAGE_LENGTH
    ? `${text.slice(0, MAX_ERROR_MESSAGE_LENGTH - 1)}…`
    : text;
}

/** `String(value)`, or a placeholder when even that throws. */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "(a value that cannot be turned into a string)";
  }
}
