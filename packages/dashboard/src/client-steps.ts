/**
 * The part of the page's script that shows a live task's durable steps:
 * a Steps button on each live task that has not ended (when the federation has
 * `getTaskSteps()`) that opens a row listing the steps recorded and the one
 * the task is at, fetched again on each update of that task.  Spliced into
 * the page's script, whose helpers (`el`, `request`, `notice`, `time`,
 * `renderProgress`) it uses; values are written as text only.  Internal.
 */
export const STEPS_SCRIPT = String.raw`
  // Steps ---------------------------------------------------------------------

  // The ids whose steps are open, with what was last fetched (null while
  // the first fetch is under way).
  const openSteps = new Map();

  const STEP_MARKS = { done: "✓", sleeping: "⏾", waiting: "…", retrying: "↻" };

  // The step a live task is at, from its status (no request).
  function stepLine(update) {
    const steps = update.steps;
    if (steps == null || ENDED.includes(update.state)) return null;
    const recorded = steps.recordedCount + " step" + (steps.recordedCount === 1 ? "" : "s") +
      " recorded";
    return el("div", {
      className: "task-step muted",
      text: steps.current == null
        ? recorded
        : "at " + steps.current.id + " (" + steps.current.phase + "), " + recorded,
    });
  }

  function stepsButton(update) {
    const open = openSteps.has(update.id);
    // An ended task's records are deleted: nothing to open.
    if (!config.features.steps || (ENDED.includes(update.state) && !open)) return null;
    const button = el("button", {
      text: open ? "Hide steps" : "Steps",
      className: "steps-toggle",
      title: "The task's durable steps: those recorded and the one it is at",
    });
    button.type = "button";
    button.setAttribute("aria-expanded", String(open));
    button.addEventListener("click", () => {
      if (openSteps.has(update.id)) {
        openSteps.delete(update.id);
        renderProgress();
        return;
      }
      openSteps.set(update.id, null);
      renderProgress();
      loadSteps(update.id);
    });
    return button;
  }

  async function loadSteps(id) {
    try {
      const body = await request("/tasks/" + encodeURIComponent(id) + "/steps");
      if (openSteps.has(id)) openSteps.set(id, body);
    } catch (error) {
      notice("Could not read the steps of " + id + ": " + error.message, true, "progress-notice");
      openSteps.delete(id);
    }
    renderProgress();
  }

  function stepsRow(update) {
    if (!openSteps.has(update.id)) return null;
    const body = openSteps.get(update.id);
    let content;
    if (body == null) content = el("p", { text: "Reading the steps…", className: "muted" });
    else if (body.steps.length === 0) {
      content = el("p", {
        text: "No recorded steps: the task has none, or it ended and its records were deleted.",
        className: "muted",
      });
    } else {
      content = el("ol", { className: "task-steps" }, body.steps.map((step) => {
        const item = el("li", { className: "step step-" + step.state, data: { step: step.id } }, [
          el("span", { text: STEP_MARKS[step.state] || "?", className: "step-mark" }),
          el("span", { text: step.id, className: "step-id mono" }),
          el("span", { text: step.kind, className: "step-kind muted" }),
          el("span", {
            className: "step-state",
            text: step.state +
              (step.until == null ? "" : " until " + time(step.until)) +
              (step.failures == null ? "" : ", failed " + step.failures + "×") +
              (step.childId == null ? "" : ", child " + step.childId),
          }),
          el("span", { text: time(step.at), className: "time muted" }),
        ]);
        if (step.id === body.current) item.setAttribute("aria-current", "step");
        return item;
      }));
    }
    const cell = el("td", null, [content]);
    cell.colSpan = 5;
    return el("tr", { className: "task-steps-row", data: { stepsOf: update.id } }, [cell]);
  }
`;
