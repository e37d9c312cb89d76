import { CLIENT_SCRIPT } from "./client.ts";
import { escapeHtml, jsonForScript } from "./escape.ts";

/** What the page is rendered with.  Internal. */
export interface PageOptions {
  readonly basePath: string;
  readonly title: string;
  readonly refreshIntervalMs: number;
  /** The nonce the Content-Security-Policy allows the inline script and style with. */
  readonly nonce: string;
  readonly features: {
    readonly progress: boolean;
    readonly hosts: boolean;
    readonly release: boolean;
    readonly cancel: boolean;
    readonly workers: boolean;
    readonly pause: boolean;
    readonly steps: boolean;
  };
}

/**
 * Renders the dashboard's one page: its structure, style and script.  No
 * data goes into the HTML but the title and the configuration (as JSON in
 * a non-executed script element); the script fetches the rest and writes
 * it as text nodes only.  Internal.
 * @param options The configuration.
 * @returns The HTML.
 */
export function renderPage(options: PageOptions): string {
  const title = escapeHtml(options.title);
  const nonce = escapeHtml(options.nonce);
  const config = jsonForScript({
    basePath: options.basePath,
    refreshIntervalMs: options.refreshIntervalMs,
    features: options.features,
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>
  <h1>${title}</h1>
  <p id="status" role="status">Loading…</p>
</header>
<main>
  <section id="queues-panel" aria-labelledby="queues-heading">
    <h2 id="queues-heading">Queues</h2>
    <div class="table-scroll">
      <table id="queues">
        <thead><tr><th>Role</th><th>Queue</th><th class="num">Queued</th><th class="num">Ready</th><th class="num">Delayed</th><th>Paused</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="paused-notice" class="notice" role="status"></p>
    <form id="pause-form" hidden>
      <span id="paused-tasks"></span>
      <label>Task <input id="pause-task" name="task" autocomplete="off" required></label>
      <button type="submit">Pause task</button>
    </form>
  </section>
  <section id="throughput-panel" aria-labelledby="throughput-heading">
    <h2 id="throughput-heading">Throughput, last hour</h2>
    <p class="totals">
      <span class="key completed"></span>completed <strong id="total-completed">0</strong>
      <span class="key failed"></span>failed <strong id="total-failed">0</strong>
      <span class="key retried"></span>retried <strong id="total-retried">0</strong>
      <span class="key dropped"></span>dropped <strong id="total-dropped">0</strong>
    </p>
    <div id="chart" role="img" aria-label="Messages per minute over the last hour"></div>
  </section>
  <section id="failed-panel" aria-labelledby="failed-heading">
    <h2 id="failed-heading">Failed tasks and deliveries <span id="failed-count" class="badge">0</span></h2>
    <p id="notice" class="notice" role="status"></p>
    <div class="table-scroll">
      <table id="failed">
        <thead><tr><th>Task</th><th>Error</th><th class="num">Attempts</th><th>Failed at</th><th>Actions</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="failed-empty" class="empty">No failed tasks or deliveries.</p>
    <button type="button" id="failed-more" hidden>Load more</button>
  </section>
  <section id="progress-panel" aria-labelledby="progress-heading">
    <h2 id="progress-heading">Live progress</h2>
    <p id="progress-notice" class="notice" role="status"></p>
    <p id="progress-unavailable" class="empty" hidden>Not available: this federation has no watchTasks().</p>
    <div class="table-scroll">
      <table id="progress">
        <thead><tr><th>Task</th><th>State</th><th>Progress</th><th>Updated</th><th>Actions</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="progress-empty" class="empty">No task updates yet.</p>
  </section>
  <section id="hosts-panel" aria-labelledby="hosts-heading">
    <h2 id="hosts-heading">Unhealthy and dead hosts</h2>
    <p id="hosts-notice" class="notice" role="status"></p>
    <p id="hosts-unavailable" class="empty" hidden>Not available: this federation has no listUnhealthyHosts().</p>
    <div class="table-scroll">
      <table id="hosts">
        <thead><tr><th>Host</th><th>State</th><th class="num">Failures</th><th>Since</th><th>Next probe</th><th class="num">Parked</th><th>Actions</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="hosts-empty" class="empty">Every host is healthy.</p>
  </section>
  <section id="workers-panel" aria-labelledby="workers-heading">
    <h2 id="workers-heading">Workers</h2>
    <p id="workers-unavailable" class="empty" hidden>Not available: this federation has no listWorkers().</p>
    <div class="table-scroll">
      <table id="workers">
        <thead><tr><th>Host</th><th class="num">PID</th><th>Runtime</th><th>Queues</th><th>State</th><th>Running</th><th class="num">Completed</th><th class="num">Failed</th><th>Last heartbeat</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="workers-empty" class="empty">No worker is registered.</p>
  </section>
</main>
<script type="application/json" id="dashboard-config">${config}</script>
<script nonce="${nonce}">${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --bg: #f6f7f9; --card: #fff;
  --line: #e3e6ea; --ok: #2e9d5b; --bad: #d64545; --warn: #d9902b; --drop: #8a63d2; --accent: #3a6ee8; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8ec; --muted: #98a2b3; --bg: #12151b; --card: #1b2029; --line: #2c3340; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); }
header { display: flex; align-items: baseline; justify-content: space-between; gap: 1rem;
  padding: 0.9rem 1.5rem; background: var(--card); border-bottom: 1px solid var(--line); }
h1 { font-size: 1.2rem; margin: 0; }
h2 { font-size: 1rem; margin: 0 0 0.6rem; }
#status { margin: 0; color: var(--muted); font-size: 0.85rem; }
#status.error { color: var(--bad); }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(560px, 100%), 1fr)); gap: 1rem;
  padding: 1rem 1.5rem; }
/* Long task names, ids, URLs and error messages wrap anywhere rather than
   widen their card; a table that still cannot fit scrolls inside it. */
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 0.9rem 1rem; min-width: 0; overflow-wrap: anywhere; }
#failed-panel, #throughput-panel, #workers-panel { grid-column: 1 / -1; }
tr.machine th { text-align: left; padding-top: 0.6em; border-bottom: 1px solid currentColor; }
/* Below 36rem a table would wrap into slivers: it scrolls inside its card. */
.table-scroll { overflow-x: auto; }
table { width: 100%; min-width: 36rem; border-collapse: collapse; }
th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 0.8rem; }
/* Headings, numbers, times, states and buttons break between words only. */
th, .num, .time, .state, .host-state, .worker-state, button { overflow-wrap: normal; }
#progress td .muted { overflow-wrap: anywhere; }
td.state { white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.empty { color: var(--muted); margin: 0.5rem 0; }
.badge { display: inline-block; min-width: 1.6em; padding: 0 0.4em; border-radius: 999px;
  background: var(--bad); color: #fff; font-size: 0.8rem; text-align: center; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.8rem; }
.muted { color: var(--muted); }
.error-name { color: var(--bad); font-weight: 600; }
pre { margin: 0.4rem 0; padding: 0.6rem; background: var(--bg); border-radius: 6px;
  overflow: auto; max-height: 20rem; white-space: pre-wrap; word-break: break-word; }
button { font: inherit; padding: 0.2rem 0.6rem; border-radius: 5px; border: 1px solid var(--line);
  background: var(--card); color: var(--fg); cursor: pointer; margin: 0 0.2rem 0.2rem 0; }
button:disabled { opacity: 0.5; cursor: default; }
button.replay { border-color: var(--accent); color: var(--accent); }
button.discard { border-color: var(--bad); color: var(--bad); }
.notice { margin: 0 0 0.5rem; color: var(--ok); }
.notice:empty { margin: 0; }
.notice.error { color: var(--bad); }
.totals { margin: 0 0 0.5rem; color: var(--muted); }
.totals strong { color: var(--fg); margin-right: 1rem; }
.key { display: inline-block; width: 0.7rem; height: 0.7rem; border-radius: 2px;
  margin-right: 0.3rem; vertical-align: -1px; }
.completed { background: var(--ok); fill: var(--ok); }
.failed { background: var(--bad); fill: var(--bad); }
.retried { background: var(--warn); fill: var(--warn); }
.dropped { background: var(--drop); fill: var(--drop); }
#chart svg { width: 100%; height: auto; display: block; }
#chart .axis { stroke: var(--line); }
#chart text { fill: var(--muted); font-size: 10px; }
.bar { width: 100%; height: 0.6rem; background: var(--line); border-radius: 999px;
  overflow: hidden; min-width: 6rem; }
.bar > span { display: block; height: 100%; background: var(--accent); }
.state-completed { color: var(--ok); font-weight: 600; }
.state-failed, .state-dropped { color: var(--bad); font-weight: 600; }
.state-cancelled { color: var(--muted); font-weight: 600; }
button.cancel { border-color: var(--bad); color: var(--bad); }
.task-steps { margin: 0; padding-left: 1.5em; }
.task-steps .step > span { margin-right: 0.75em; }
.task-steps .step[aria-current] { font-weight: 600; }
.host.dead .host-state { color: var(--bad); font-weight: 600; }
.state-retrying { color: var(--warn); font-weight: 600; }
`;
