// The bounds of durable steps: what one record, one run and one wait may
// hold, and how long sent events are kept.

/**
 * The largest encoded result of one step (or data of one event): 64 KiB.
 * @since 0.4.0
 */
export const MAX_STEP_RECORD_BYTES = 64 * 1024;

/**
 * The most steps one task may record.
 * @since 0.4.0
 */
export const MAX_TASK_STEPS = 1000;

/**
 * The longest sleep or wait: 365 days.
 * @since 0.4.0
 */
export const MAX_STEP_WAIT_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * How long a sent event is kept for waits that start later, by default:
 * 1 hour.
 * @since 0.4.0
 */
export const DEFAULT_STEP_EVENT_WINDOW_MS = 60 * 60 * 1000;

/** The longest `keepFor` of an event: 30 days. */
export const MAX_STEP_EVENT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** The most tasks waiting on one event key at once. */
export const MAX_WAITERS_PER_KEY = 1000;

/** The longest step id and event name. */
export const MAX_STEP_ID_LENGTH = 200;

/** The longest event key. */
export const MAX_EVENT_KEY_LENGTH = 500;

/** How often a waiting `invoke()` looks at its child's status anyway. */
export const INVOKE_RECHECK_MS = 60 * 60 * 1000;
