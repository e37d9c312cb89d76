import { STEPS_SCRIPT } from "./client-steps.ts";

/**
 * The page's script, run in the operator's browser.  Every value from the
 * server is written with `textContent` or as an attribute through the DOM,
 * never parsed as HTML, so payloads and errors (attacker-controlled: they
 * come from remote activities and task data) show as text.  Internal.
 */
export const CLIENT_SCRIPT = String.raw`
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("dashboard-config").textContent);
  const CSRF_HEADER = "X-Fedwork-Dashboard";
  const api = (path) => config.basePath + "/api" + path;
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, options, children) {
    const node = document.createElement(tag);
    if (options != null) {
      if (options.className != null) node.className = options.className;
      if (options.text != null) node.textContent = String(options.text);
      if (options.title != null) node.title = String(options.title);
      if (options.data != null) {
        for (const key of Object.keys(options.data)) node.dataset[key] = String(options.data[key]);
      }
    }
    for (const child of children || []) if (child != null) node.append(child);
    return node;
  }

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const key of Object.keys(attributes)) node.setAttribute(key, String(attributes[key]));
    return node;
  }

  function time(iso) {
    if (iso == null) return "";
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
  }

  function number(value) {
    return value == null ? "–" : String(value);
  }

  async function request(path, init) {
    const response = await fetch(api(path), Object.assign({
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    }, init || {}));
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (!response.ok) {
      throw new Error(body != null && typeof body.error === "string"
        ? body.error
        : "HTTP " + response.status);
    }
    return body;
  }

  function setStatus(text, isError) {
    const status = $("status");
    status.textContent = text;
    status.classList.toggle("error", !!isError);
  }

  // Each panel says what its buttons did under its own heading: "notice"
  // (failed tasks), "hosts-notice", "progress-notice".
  function notice(text, isError, where) {
    const node = $(where || "notice");
    node.textContent = text;
    node.classList.toggle("error", !!isError);
  }

  // Queues ------------------------------------------------------------------

  const ROLES = ["inbox", "outbox", "fanout", "task"];

  function renderQueues(queues, paused) {
    const body = $("queues").tBodies[0];
    body.replaceChildren(...queues.map((entry) => {
      const cell = el("td", { className: "paused" });
      // A row per queue; the roles a pause applies to are the four named.
      if (paused != null && ROLES.includes(entry.role)) {
        const isPaused = paused.roles.includes(entry.role);
        cell.append(isPaused ? "paused " : "");
        const toggle = el("button", {
          text: isPaused ? "Resume" : "Pause",
          className: isPaused ? "resume-role" : "pause-role",
          title: isPaused
            ? "Let the workers run this role's queued messages again"
            : "Hold this role's queued messages in every process",
        });
        toggle.type = "button";
        toggle.addEventListener("click", () =>
          togglePause("role", entry.role, isPaused ? "resume" : "pause", toggle));
        cell.append(toggle);
      }
      return el("tr", { data: { role: entry.role } }, [
        el("td", { text: entry.role }),
        el("td", { text: entry.queue, className: "mono" }),
        el("td", { text: number(entry.depth && entry.depth.queued), className: "num" }),
        el("td", { text: number(entry.depth && entry.depth.ready), className: "num" }),
        el("td", { text: number(entry.depth && entry.depth.delayed), className: "num" }),
        cell,
      ]);
    }));
    if (queues.length === 0) {
      body.append(el("tr", null, [el("td", { text: "No queues configured.", className: "muted" })]));
    }
  }

  function renderPausedTasks(paused) {
    const form = $("pause-form");
    form.hidden = paused == null;
    if (paused == null) return;
    const list = $("paused-tasks");
    list.replaceChildren(...paused.tasks.map((task) => {
      const resume = el("button", { text: "Resume " + task, className: "resume-task" });
      resume.type = "button";
      resume.addEventListener("click", () => togglePause("task", task, "resume", resume));
      return resume;
    }));
    if (paused.tasks.length > 0) list.prepend("Paused tasks: ");
  }

  async function togglePause(kind, name, action, button) {
    if (button != null) button.disabled = true;
    try {
      await post("/paused/" + kind + "/" + encodeURIComponent(name) + "/" + action);
      notice((action === "pause" ? "Paused " : "Resumed ") + "the " + kind + " " + name + ".", false, "paused-notice");
      refresh();
    } catch (error) {
      if (button != null) button.disabled = false;
      notice("Could not " + action + " " + name + ": " + error.message, true, "paused-notice");
    }
  }

  $("pause-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("pause-task");
    const task = input.value.trim();
    if (task === "") return;
    input.value = "";
    togglePause("task", task, "pause", null);
  });

  // Throughput chart --------------------------------------------------------

  const SERIES = ["completed", "retried", "dropped", "failed"];

  function renderChart(buckets) {
    const totals = { completed: 0, failed: 0, retried: 0, dropped: 0 };
    let max = 1;
    for (const bucket of buckets) {
      let sum = 0;
      for (const name of SERIES) {
        totals[name] += bucket[name];
        sum += bucket[name];
      }
      if (sum > max) max = sum;
    }
    for (const name of SERIES) $("total-" + name).textContent = String(totals[name]);
    const width = 1000, height = 170, left = 34, bottom = 18, top = 6;
    const plot = height - bottom - top;
    const step = (width - left) / Math.max(buckets.length, 1);
    const chart = svg("svg", { viewBox: "0 0 " + width + " " + height });
    chart.append(svg("line", { x1: left, y1: top + plot, x2: width, y2: top + plot, class: "axis" }));
    chart.append(svg("line", { x1: left, y1: top, x2: left, y2: top + plot, class: "axis" }));
    const label = (x, y, text, anchor) => {
      const node = svg("text", { x: x, y: y, "text-anchor": anchor || "start" });
      node.textContent = text;
      chart.append(node);
    };
    label(left - 4, top + 8, String(max), "end");
    label(left - 4, top + plot, "0", "end");
    label(left, height - 4, "−" + buckets.length + " min");
    label(width, height - 4, "now", "end");
    buckets.forEach((bucket, index) => {
      let y = top + plot;
      for (const name of SERIES) {
        const value = bucket[name];
        if (value <= 0) continue;
        const h = Math.max(1, (value / max) * plot);
        y -= h;
        const rect = svg("rect", {
          x: left + index * step + 0.5,
          y: y,
          width: Math.max(1, step - 1),
          height: h,
          class: name,
        });
        const tip = svg("title", {});
        tip.textContent = time(bucket.minute) + ": " + value + " " + name;
        rect.append(tip);
        chart.append(rect);
      }
    });
    $("chart").replaceChildren(chart);
  }

  // Workers -----------------------------------------------------------------

  function renderWorkers(workers) {
    if (workers == null) {
      $("workers-unavailable").hidden = false;
      $("workers").hidden = true;
      $("workers-empty").hidden = true;
      return;
    }
    // One heading row per machine, then its workers: a machine is what an
    // operator restarts or drains.
    const machines = new Map();
    for (const worker of workers) {
      const id = worker.machineId == null || worker.machineId === ""
        ? worker.host
        : worker.machineId;
      if (!machines.has(id)) machines.set(id, []);
      machines.get(id).push(worker);
    }
    const rows = [];
    for (const id of [...machines.keys()].sort()) {
      const list = machines.get(id);
      const busy = list.filter((worker) => worker.state === "busy").length;
      const heading = el("th", {
        text: id + " \u2014 " + list.length + (list.length === 1 ? " worker" : " workers") +
          ", " + busy + " busy",
        className: "mono",
      });
      heading.colSpan = 9;
      heading.scope = "rowgroup";
      rows.push(el("tr", { className: "machine", data: { machine: id } }, [heading]));
      for (const worker of list) {
        rows.push(
          el("tr", {
            className: "worker " + worker.state,
            data: { worker: worker.id, machine: id },
          }, [
            el("td", { text: worker.host, className: "mono" }),
            el("td", { text: String(worker.pid), className: "num" }),
            el("td", { text: worker.runtime }),
            el("td", { text: worker.queues.join("; ") }),
            el("td", { text: worker.state, className: "worker-state" }),
            el("td", {
              text: worker.currentTaskIds.join(", "),
              className: "mono worker-running",
            }),
            el("td", { text: number(worker.completed), className: "num" }),
            el("td", { text: number(worker.failed), className: "num" }),
            el("td", { text: time(worker.lastHeartbeatAt), className: "time" }),
          ]),
        );
      }
    }
    $("workers").tBodies[0].replaceChildren(...rows);
    $("workers").hidden = workers.length === 0;
    $("workers-empty").hidden = workers.length > 0;
  }

  // Unhealthy hosts ---------------------------------------------------------

  function renderHosts(hosts) {
    if (hosts == null) {
      $("hosts-unavailable").hidden = false;
      $("hosts").hidden = true;
      $("hosts-empty").hidden = true;
      return;
    }
    $("hosts").tBodies[0].replaceChildren(...hosts.map((host) => {
      const actions = el("td");
      if (config.features.release) {
        const release = el("button", {
          text: "Release",
          className: "release",
          title: "Declare it healthy: deliveries to it are tried again",
        });
        release.type = "button";
        release.addEventListener("click", () => releaseHost(host.host, release));
        actions.append(release);
      }
      return el("tr", { className: host.dead ? "host dead" : "host", data: { host: host.host } }, [
        el("td", { text: host.host, className: "mono" }),
        el("td", { text: host.dead ? "dead" : "unhealthy", className: "host-state" }),
        el("td", { text: number(host.consecutiveFailures), className: "num" }),
        el("td", { text: time(host.since), className: "time" }),
        el("td", { text: host.dead ? "" : time(host.nextProbeAt), className: "time" }),
        el("td", { text: number(host.parkedDeliveries), className: "num" }),
        actions,
      ]);
    }));
    $("hosts").hidden = hosts.length === 0;
    $("hosts-empty").hidden = hosts.length > 0;
  }

  async function releaseHost(host, button) {
    button.disabled = true;
    try {
      await post("/hosts/" + encodeURIComponent(host) + "/release");
      notice("Released " + host + "; deliveries to it are tried again.", false, "hosts-notice");
      refresh();
    } catch (error) {
      button.disabled = false;
      notice("Could not release " + host + ": " + error.message, true, "hosts-notice");
    }
  }

  // Failed tasks ------------------------------------------------------------

  const failed = { records: [], cursor: null, open: new Set(), details: new Map(), lastPage: null, extended: false };

  async function loadFailed(more) {
    const query = more && failed.cursor != null ? "?cursor=" + encodeURIComponent(failed.cursor) : "";
    const page = await request("/failed" + query);
    // An unchanged first page is not redrawn, so that buttons keep their
    // state (and focus) between refreshes.
    const key = JSON.stringify(page);
    if (!more && key === failed.lastPage) return;
    failed.lastPage = more ? null : key;
    // Once more pages are shown, refreshing (which reloads the first page)
    // stops, so that they stay.
    failed.extended = failed.extended || more;
    failed.records = more ? failed.records.concat(page.records) : page.records;
    failed.cursor = page.cursor;
    renderFailed();
  }

  function renderFailed() {
    const body = $("failed").tBodies[0];
    const rows = [];
    for (const record of failed.records) {
      const replay = el("button", { text: "Replay", className: "replay", title: "Enqueue it again" });
      replay.type = "button";
      replay.addEventListener("click", () => replayTask(record, replay));
      const discard = el("button", { text: "Discard", className: "discard" });
      discard.type = "button";
      discard.addEventListener("click", () => discardTask(record, discard));
      const toggle = el("button", { text: failed.open.has(record.id) ? "Hide" : "Details" });
      toggle.type = "button";
      toggle.addEventListener("click", () => toggleDetails(record));
      const error = record.error;
      const delivery = record.delivery;
      const quarantined = record.message;
      const name = quarantined != null
        ? [
          el("div", {
            text: (record.kind === "fanout" ? "fan-out of " : "received ") +
              (quarantined.activityType || "activity"),
            className: "task-name",
          }),
          quarantined.activityId == null
            ? null
            : el("div", { text: quarantined.activityId, className: "mono muted" }),
        ]
        : delivery == null
        ? [el("div", { text: record.taskName, className: "task-name" })]
        : [
          el("div", { text: "delivery of " + delivery.activityType, className: "task-name" }),
          el("div", { text: "to " + delivery.inbox, className: "inbox mono" }),
          delivery.statusCode == null
            ? null
            : el("div", { text: "last answer: HTTP " + delivery.statusCode, className: "muted" }),
        ];
      rows.push(el("tr", {
        className: delivery == null ? "failed-task" : "failed-task failed-delivery",
        data: { id: record.id },
      }, [
        el("td", null, name.concat([el("div", { text: record.id, className: "mono muted" })])),
        el("td", { className: "error" }, error == null ? [] : [
          el("span", { text: error.name + ": ", className: "error-name" }),
          el("span", { text: error.message, className: "error-message" }),
          el("div", {
            text: record.reason === "poison"
              ? "poison: quarantined unrun after " +
                (quarantined?.deliveries == null ? "too many" : quarantined.deliveries) +
                " hand-outs without an outcome"
              : record.reason || "",
            className: record.reason === "poison" ? "muted poison" : "muted",
          }),
        ]),
        el("td", { text: record.attempts, className: "num" }),
        el("td", { text: time(record.finishedAt), className: "time" }),
        el("td", null, [toggle, replay, discard]),
      ]));
      if (failed.open.has(record.id)) rows.push(detailsRow(record));
    }
    body.replaceChildren(...rows);
    $("failed").hidden = failed.records.length === 0;
    $("failed-empty").hidden = failed.records.length > 0;
    $("failed-more").hidden = failed.cursor == null;
  }

  function detailsRow(record) {
    const details = failed.details.get(record.id);
    const cell = el("td", { className: "details" });
    cell.colSpan = 5;
    if (details == null) {
      cell.append(el("p", { text: "Loading…", className: "muted" }));
    } else if (details.loadError != null) {
      cell.append(el("p", { text: details.loadError, className: "muted" }));
    } else {
      cell.append(el("h3", { text: "Payload" }));
      cell.append(details.payload != null
        ? el("pre", { text: details.payload, className: "payload" })
        : el("p", { text: "Could not decode: " + details.payloadError, className: "muted" }));
      if (details.stack != null) {
        cell.append(el("h3", { text: "Error" }));
        cell.append(el("pre", { text: details.stack, className: "stack" }));
      }
      cell.append(el("p", {
        className: "muted",
        text: "Enqueued " + time(details.enqueuedAt) +
          (details.orderingKey != null ? " · ordering key " + details.orderingKey : ""),
      }));
    }
    return el("tr", { className: "failed-details", data: { id: record.id } }, [cell]);
  }

  async function toggleDetails(record) {
    if (failed.open.has(record.id)) {
      failed.open.delete(record.id);
      renderFailed();
      return;
    }
    failed.open.add(record.id);
    renderFailed();
    try {
      failed.details.set(record.id, await request("/failed/" + encodeURIComponent(record.id)));
    } catch (error) {
      failed.details.set(record.id, { loadError: error.message });
    }
    renderFailed();
  }

  function post(path) {
    const headers = { Accept: "application/json" };
    headers[CSRF_HEADER] = "1";
    return request(path, { method: "POST", headers: headers });
  }

  function forget(record) {
    failed.lastPage = null;
    failed.records = failed.records.filter((other) => other.id !== record.id);
    failed.open.delete(record.id);
    failed.details.delete(record.id);
    renderFailed();
  }

  async function replayTask(record, button) {
    button.disabled = true;
    try {
      await post("/failed/" + encodeURIComponent(record.id) + "/replay");
      forget(record);
      notice("Replayed " + record.taskName + " " + record.id + "; it is queued again.");
      trackReplay(record);
      refresh();
    } catch (error) {
      button.disabled = false;
      notice("Could not replay " + record.id + ": " + error.message, true);
    }
  }

  async function discardTask(record, button) {
    if (button.dataset.confirm !== "yes") {
      button.dataset.confirm = "yes";
      button.textContent = "Really discard?";
      return;
    }
    button.disabled = true;
    try {
      await post("/failed/" + encodeURIComponent(record.id) + "/discard");
      forget(record);
      notice("Discarded " + record.taskName + " " + record.id + ".");
      refresh();
    } catch (error) {
      button.disabled = false;
      notice("Could not discard " + record.id + ": " + error.message, true);
    }
  }

  $("failed-more").addEventListener("click", () => {
    loadFailed(true).catch((error) => notice(error.message, true));
  });

  // Live progress -----------------------------------------------------------

  const progress = new Map();

  function trackReplay(record) {
    if (!config.features.progress || progress.has(record.id)) return;
    progress.set(record.id, {
      id: record.id,
      name: record.taskName,
      state: "queued",
      percent: null,
      data: null,
      error: null,
      updatedAt: new Date().toISOString(),
    });
    renderProgress();
  }

  function renderProgress() {
    const updates = [...progress.values()]
      .sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)))
      .slice(0, 50);
    $("progress").tBodies[0].replaceChildren(...updates.flatMap((update) => {
      const bar = el("div", { className: "bar" }, [el("span")]);
      const percent = update.percent == null
        ? (update.state === "completed" ? 100 : 0)
        : Math.max(0, Math.min(100, update.percent));
      bar.firstChild.style.width = percent + "%";
      return [el("tr", { className: "task-progress", data: { id: update.id } }, [
        el("td", null, [
          el("div", { text: update.name }),
          el("div", { text: update.id, className: "mono muted" }),
          update.machineId == null ? null : el("div", {
            text: "on " + update.machineId,
            title: "worker " + update.workerId,
            className: "mono muted task-machine",
          }),
        ]),
        el("td", { text: update.state, className: "state state-" + update.state }),
        el("td", null, [
          bar,
          stepLine(update),
          el("div", {
            className: "muted",
            text: (update.percent == null ? "" : Math.round(update.percent) + "% ") +
              (update.data == null ? "" : update.data) +
              (update.error == null ? "" : update.error),
          }),
        ]),
        el("td", { text: time(update.updatedAt), className: "time" }),
        el("td", null, [...cancelButton(update), stepsButton(update)]),
      ]), stepsRow(update)].filter((row) => row != null);
    }));
    $("progress").hidden = updates.length === 0;
    $("progress-empty").hidden = updates.length > 0;
  }

  const ENDED = ["completed", "failed", "dropped", "cancelled"];
  // The ids whose Cancel was clicked once: the rows are rebuilt on every
  // update, and the confirmation must outlive that.
  const confirmingCancel = new Set();

  function cancelButton(update) {
    if (!config.features.cancel || ENDED.includes(update.state)) {
      confirmingCancel.delete(update.id);
      return [];
    }
    const confirming = confirmingCancel.has(update.id);
    const button = el("button", {
      text: confirming ? "Really cancel?" : "Cancel",
      className: "cancel",
      title: "Cancel the task: a queued one never runs; a running one has its signal aborted",
    });
    button.type = "button";
    button.addEventListener("click", () => cancelTask(update, button));
    return [button];
  }

  async function cancelTask(update, button) {
    if (!confirmingCancel.has(update.id)) {
      confirmingCancel.add(update.id);
      button.textContent = "Really cancel?";
      return;
    }
    confirmingCancel.delete(update.id);
    button.disabled = true;
    try {
      const result = await post("/tasks/" + encodeURIComponent(update.id) + "/cancel");
      notice(
        result.status === "cancelled"
          ? "Cancelled " + update.name + " " + update.id + "."
          : result.status === "finished"
          ? update.name + " " + update.id + " had already ended (" + result.state + ")."
          : "No task " + update.id + " is known.",
        false,
        "progress-notice",
      );
    } catch (error) {
      button.disabled = false;
      notice("Could not cancel " + update.id + ": " + error.message, true, "progress-notice");
    }
  }

  function watchProgress() {
    if (!config.features.progress || typeof EventSource !== "function") {
      $("progress-unavailable").hidden = false;
      $("progress").hidden = true;
      $("progress-empty").hidden = true;
      return;
    }
    const source = new EventSource(api("/events"));
    source.addEventListener("task", (event) => {
      let update;
      try {
        update = JSON.parse(event.data);
      } catch (_) {
        return;
      }
      const previous = progress.get(update.id);
      if (update.percent == null && previous != null && update.kind !== "progress") {
        update.percent = previous.percent;
      }
      progress.set(update.id, update);
      if (openSteps.has(update.id)) loadSteps(update.id);
      if (progress.size > 200) {
        const oldest = [...progress.values()]
          .sort((a, b) => String(a.updatedAt).localeCompare(String(b.updatedAt)))[0];
        progress.delete(oldest.id);
      }
      renderProgress();
    });
    renderProgress();
  }

  // Refreshing ----------------------------------------------------------------

  let refreshing = null;

  function refresh() {
    if (refreshing != null) return refreshing;
    refreshing = (async () => {
      try {
        const overview = await request("/overview");
        renderQueues(overview.queues, overview.paused);
        renderPausedTasks(overview.paused);
        renderChart(overview.throughput);
        renderHosts(overview.hosts);
        renderWorkers(overview.workers);
        let count = 0;
        for (const key of Object.keys(overview.failedCounts)) count += overview.failedCounts[key];
        $("failed-count").textContent = String(count);
        if (!failed.extended) await loadFailed(false);
        // An open list of steps may have changed without a task update (the
        // records of an ended task are deleted after its last one).
        for (const id of openSteps.keys()) loadSteps(id);
        setStatus("Updated " + new Date(overview.generatedAt).toLocaleTimeString());
      } catch (error) {
        setStatus("Could not refresh: " + error.message, true);
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

${STEPS_SCRIPT}
  watchProgress();
  refresh();
  setInterval(refresh, config.refreshIntervalMs);
})();
`;
