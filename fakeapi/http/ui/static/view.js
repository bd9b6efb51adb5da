// The page's rendering, coalesced: whatever changed is marked, and the renderers whose marks
// are set run at most every RENDER_EVERY_MS, on an animation frame. Every string reaches the
// page as text (textContent, title, value), never as markup.

const RENDER_EVERY_MS = 200;
const CLUSTER = new Set(["nodes", "resourceslices", "resourceclaims", "devicetaintrules"]);

/** What the page shows: `revision` is null while live, else the past revision shown. */
export const state = { revision: null, epoch: 0 };
// epoch: bumped when anything a scheduler verdict depends on changes

const dirty = new Set();
const renderers = [];
let renderTimer = null;
let lastRender = 0;

/** Run `run` at a render when any of `names` (or "all") was marked; `names` null: always. */
export function onRender(names, run) {
  renderers.push({ names, run });
}

/** Mark `what` changed, and schedule a render. */
export function changed(what) {
  dirty.add(what);
  if (CLUSTER.has(what)) state.epoch += 1;
  if (renderTimer !== null) return;
  const wait = Math.max(0, lastRender + RENDER_EVERY_MS - performance.now());
  renderTimer = setTimeout(() => requestAnimationFrame(render), wait);
}

function render() {
  renderTimer = null;
  lastRender = performance.now();
  const all = dirty.has("all");
  for (const r of renderers) {
    if (!r.names || all || r.names.some((n) => dirty.has(n))) r.run();
  }
  dirty.clear();
}

/** An element with properties (`class`, `data`, others as is) and text or element children. */
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") node.className = v;
    else if (k === "data") Object.assign(node.dataset, v);
    else node[k] = v;
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return node;
}

/** The element with this id. */
export const byId = (id) => document.getElementById(id);

/** Compare strings with their numbers in order (worker-2 before worker-10). */
export const natural = new Intl.Collator(undefined, { numeric: true }).compare;

/** The box that says what could not be read, and why. */
export function errorBox(what, error) {
  return el("div", { class: "error", data: { resource: what } },
    `Can't read ${what}: ${error.message}`);
}
