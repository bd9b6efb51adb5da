// The timeline: the server's event log (/debug/fakeapi/log, what `fakeapi log show` prints),
// followed by listing it again every POLL_MS from the newest revision shown, filterable, with
// a field diff per update. Time travel starts here: a revision picked (an entry's button or
// the revision box) shows the cluster as it was then, read-only, until "back to live".

import { call, sleep, stream } from "./api.js";
import { byId, changed, el, errorBox, onRender, state } from "./view.js";
import { travel } from "./watch.js";

const POLL_MS = 1000;
const TIMELINE_KEEP = 2000;
const TIMELINE_SHOWN = 300;
const TIMELINE_BACK = 500;

const timeline = { entries: [], error: null, controller: null };

/** Follow the log from TIMELINE_BACK revisions before the newest, until `stopLog`. */
export async function followLog() {
  const controller = timeline.controller = new AbortController();
  const signal = controller.signal;
  let last = 0; // the newest revision shown (listed again, as a bound must be in the log)
  let backoff = 500;
  while (!signal.aborted) {
    try {
      if (!last) {
        const head = await call("GET", "/api/v1/namespaces?limit=1", undefined, signal);
        last = Math.max(1, Number(head.metadata.resourceVersion) - TIMELINE_BACK);
      }
      const query = `?object=false&diff=true&since=${last}`;
      let added = false;
      for await (const entry of await stream("/debug/fakeapi/log" + query, signal)) {
        signal.throwIfAborted();
        if (entry.revision <= last && timeline.entries.length) continue;
        timeline.entries.push(entry);
        last = entry.revision;
        added = true;
      }
      if (timeline.entries.length > TIMELINE_KEEP) {
        timeline.entries.splice(0, timeline.entries.length - TIMELINE_KEEP);
      }
      if (added || timeline.error) {
        timeline.error = null;
        changed("timeline");
      }
      backoff = 500;
      await sleep(POLL_MS);
    } catch (e) {
      if (signal.aborted) return;
      timeline.error = e;
      changed("timeline");
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 10000);
    }
  }
}

/** Stop following the log and forget what it showed. */
export function stopLog() {
  if (timeline.controller) timeline.controller.abort();
  timeline.entries = [];
  timeline.error = null;
}

function travelButton(revision) {
  const button = el("button", { type: "button", class: "travel",
    title: `show the cluster as it was at revision ${revision}` }, "view");
  button.addEventListener("click", (event) => {
    event.preventDefault(); // not the entry's toggle
    goTo(revision);
  });
  return button;
}

function renderTimeline() {
  const box = byId("timeline");
  if (timeline.error) { box.replaceChildren(errorBox("the event log", timeline.error)); return; }
  const wanted = byId("timeline-filter").value.trim().toLowerCase();
  const rows = [];
  for (let i = timeline.entries.length - 1; i >= 0 && rows.length < TIMELINE_SHOWN; i--) {
    const e = timeline.entries[i];
    const where = e.namespace ? `${e.namespace}/${e.name}` : e.name;
    const fields = [String(e.revision), e.time, e.actor, e.verb, e.resource, where];
    if (wanted && !fields.some((f) => f.toLowerCase().includes(wanted))) continue;
    const diff = e.diff || [];
    const current = state.revision !== null && e.revision === state.revision;
    rows.push(el("details", { class: "entry" + (current ? " current" : ""),
      data: { revision: e.revision } },
    el("summary", {}, ...fields.map((f) => el("span", {}, f)), travelButton(e.revision)),
    el("pre", {}, diff.join("\n"))));
  }
  box.replaceChildren(...(rows.length ? rows : [el("p", { class: "muted" }, "no events")]));
}

function renderTravel() {
  const past = state.revision !== null;
  byId("live").hidden = !past;
  byId("travel-note").textContent = past ? `showing revision ${state.revision}, read-only` : "";
  document.body.classList.toggle("past", past);
}

function goTo(revision) {
  travel(revision);
  changed("travel");
}

/** Wire the filter, the revision box and "back to live". */
export function wireTimeline() {
  byId("timeline-filter").addEventListener("input", () => changed("filter"));
  byId("travel").addEventListener("submit", (event) => {
    event.preventDefault();
    const revision = Number(byId("travel-revision").value);
    if (Number.isInteger(revision) && revision > 0) goTo(revision);
  });
  byId("live").addEventListener("click", () => goTo(null));
}

onRender(["timeline", "filter", "travel"], renderTimeline);
onRender(["travel"], renderTravel);
