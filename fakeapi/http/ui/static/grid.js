// The cluster grid: one row per node (Ready or not, its taints) and one cell per device of
// its slices (the newest generation of each pool), free, allocated or shared, with the claim
// and pod holding it, its health and the taints and faults on it; partitions of one device
// (a counter set) grouped. A row is built again only when what it shows changed.

import { keyOf } from "./api.js";
import { byId, el, errorBox, natural, onRender } from "./view.js";
import { data } from "./watch.js";

const HEALTH_RANK = { Healthy: 0, Unknown: 1, Unhealthy: 2 };
let firstGrid = false;

function devicesByRow() {
  const newest = new Map(); // driver/pool -> newest generation
  for (const s of data.resourceslices.items.values()) {
    const pool = `${s.spec.driver}/${s.spec.pool.name}`;
    newest.set(pool, Math.max(newest.get(pool) ?? 0, s.spec.pool.generation || 0));
  }
  const rows = new Map(); // row key (a node, or a pool without one) -> devices
  for (const s of data.resourceslices.items.values()) {
    const spec = s.spec;
    if ((spec.pool.generation || 0) < newest.get(`${spec.driver}/${spec.pool.name}`)) continue;
    const row = spec.nodeName || `(${spec.allNodes ? "all nodes" : "node selector"}) ` +
      `${spec.driver}/${spec.pool.name}`;
    if (!rows.has(row)) rows.set(row, []);
    for (const d of spec.devices || []) {
      rows.get(row).push({ driver: spec.driver, pool: spec.pool.name, node: spec.nodeName || "",
        slice: s.metadata.name, device: d });
    }
  }
  return rows;
}

function allocations() {
  const found = new Map(); // driver/pool/device -> [{claim, request, shareID, pods}]
  for (const c of data.resourceclaims.items.values()) {
    const status = c.status || {};
    const results = ((status.allocation || {}).devices || {}).results || [];
    const pods = (status.reservedFor || []).filter((r) => r.resource === "pods")
      .map((r) => `${c.metadata.namespace}/${r.name}`);
    for (const r of results) {
      const id = `${r.driver}/${r.pool}/${r.device}`;
      if (!found.has(id)) found.set(id, []);
      found.get(id).push({ claim: keyOf(c), request: r.request, shareID: r.shareID, pods });
    }
  }
  return found;
}

function reportedHealth() {
  const found = new Map(); // driver/pool/device -> {health, message}
  for (const p of data.pods.items.values()) {
    const status = p.status || {};
    for (const cs of [...(status.containerStatuses || []), ...(status.initContainerStatuses || [])]) {
      for (const entry of cs.allocatedResourcesStatus || []) {
        for (const r of entry.resources || []) {
          const old = found.get(r.resourceID);
          if (!old || HEALTH_RANK[r.health] > HEALTH_RANK[old.health]) found.set(r.resourceID, r);
        }
      }
    }
  }
  return found;
}

function faultsByDevice() {
  const found = new Map(); // node|driver|device -> [fault]
  for (const f of data.devicefaults.items.values()) {
    const s = f.spec || {};
    const id = `${s.nodeName}|${s.driver}|${s.device}`;
    if (!found.has(id)) found.set(id, []);
    found.get(id).push(f);
  }
  return found;
}

function ruleMatches(rule, d) {
  const sel = (rule.spec || {}).deviceSelector || {};
  return (!sel.driver || sel.driver === d.driver) && (!sel.pool || sel.pool === d.pool) &&
    (!sel.device || sel.device === d.device.name);
}

const value = (v) => v === null || typeof v !== "object" ? String(v) :
  "string" in v ? v.string : "int" in v ? String(v.int) : "bool" in v ? String(v.bool) :
    "version" in v ? v.version : JSON.stringify(v);

/** A taint as kubectl writes it: key=value:effect. */
function taintText(t) {
  return `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`;
}

function cellModel(d, ctx) {
  const id = `${d.driver}/${d.pool}/${d.device.name}`;
  const held = ctx.allocated.get(id) || [];
  const faults = ctx.faults.get(`${d.node}|${d.driver}|${d.device.name}`) || [];
  const reported = ctx.health.get(id);
  let health = "Healthy";
  let source = "no report, no fault";
  if (reported) {
    health = reported.health;
    source = "reported" + (reported.message ? ": " + reported.message : "");
  } else if (faults.length) {
    health = faults.some((f) => (f.spec.mode || "Unhealthy") === "Unhealthy") ? "Unhealthy" : "Unknown";
    source = "fault";
  }
  const taints = [...(d.device.taints || []).map(taintText),
    ...ctx.rules.filter((r) => ruleMatches(r, d)).map((r) =>
      `${taintText(r.spec.taint || {})} (DeviceTaintRule ${r.metadata.name})`)];
  const shared = held.length > 1 || held.some((h) => h.shareID);
  return {
    id, name: d.device.name, driver: d.driver, pool: d.pool, node: d.node,
    state: held.length === 0 ? "free" : shared ? "shared" : "allocated",
    health, source, taints, held,
    faults: faults.map((f) => `${f.metadata.name}: ${f.spec.mode || "Unhealthy"}` +
      (f.spec.message ? ` (${f.spec.message})` : "")),
    counterSets: (d.device.consumesCounters || []).map((c) => c.counterSet),
    attributes: Object.entries(d.device.attributes || {}).map(([k, v]) => `${k}=${value(v)}`),
    capacity: Object.entries(d.device.capacity || {}).map(([k, v]) => `${k}=${v.value}`),
  };
}

function cellDetail(m) {
  const lines = [`${m.id}`, `state: ${m.state}`, `health: ${m.health} (${m.source})`];
  for (const h of m.held) {
    lines.push(`claim ${h.claim} (request ${h.request}${h.shareID ? ", share " + h.shareID : ""})` +
      (h.pods.length ? ` held by pod ${h.pods.join(", ")}` : ""));
  }
  for (const t of m.taints) lines.push(`taint ${t}`);
  for (const f of m.faults) lines.push(`fault ${f}`);
  if (m.counterSets.length) lines.push(`partition of ${m.counterSets.join(", ")}`);
  if (m.attributes.length) lines.push("attributes:", ...m.attributes.map((a) => "  " + a));
  if (m.capacity.length) lines.push("capacity:", ...m.capacity.map((c) => "  " + c));
  return lines.join("\n");
}

function cell(m) {
  const holders = [...new Set(m.held.flatMap((h) => h.pods.length ? h.pods : [h.claim]))];
  const classes = ["cell", m.state, "health-" + m.health];
  if (m.taints.length) classes.push("tainted");
  const node = el("button", {
    type: "button", class: classes.join(" "), title: cellDetail(m),
    data: { device: m.id, state: m.state, health: m.health },
  }, el("span", { class: "name" }, m.name),
  holders.length ? el("span", { class: "holder" }, holders.join(", ")) : null);
  node.addEventListener("click", () => showDevice(m));
  return node;
}

let selected = ""; // the device whose details are shown, kept current as it changes

function showDevice(m) {
  selected = m.id;
  const detail = byId("device-detail");
  detail.hidden = false;
  detail.textContent = cellDetail(m);
  byId("fault-node").value = m.node;
  byId("fault-driver").value = m.driver;
  byId("fault-device").value = m.name;
}

function deviceCells(models) {
  const out = [];
  const groups = new Map(); // a counter set's partitions, shown together
  for (const m of models) {
    if (!m.counterSets.length) { out.push(cell(m)); continue; }
    const id = `${m.driver}/${m.pool}/${m.counterSets[0]}`;
    if (!groups.has(id)) {
      const group = el("span", { class: "group", title: `partitions of ${m.counterSets[0]}` },
        el("span", { class: "group-name" }, m.counterSets[0]));
      groups.set(id, group);
      out.push(group);
    }
    groups.get(id).append(cell(m));
  }
  return out;
}

function nodeSummary(node) {
  if (!node) return { ready: "", taints: [] };
  const ready = ((node.status || {}).conditions || []).find((c) => c.type === "Ready");
  return {
    ready: ready && ready.status === "True" ? "Ready" : "NotReady",
    taints: ((node.spec || {}).taints || []).map(taintText),
  };
}

const rowCache = new Map(); // row key -> {signature, element}

/** Draw the grid from the collections (the page's first draw sets the fakeapi-grid mark). */
function renderGrid() {
  const grid = byId("grid");
  for (const name of ["resourceslices", "nodes"]) {
    if (data[name].error) {
      grid.replaceChildren(errorBox(name, data[name].error));
      rowCache.clear();
      return;
    }
  }
  if (!data.resourceslices.loaded || !data.nodes.loaded) return;
  const ctx = {
    allocated: allocations(), health: reportedHealth(), faults: faultsByDevice(),
    rules: [...data.devicetaintrules.items.values()],
  };
  const byRow = devicesByRow();
  const keys = [...new Set([...data.nodes.items.keys(), ...byRow.keys()])].sort(natural);
  const rows = [];
  for (const key of keys) {
    const models = (byRow.get(key) || []).map((d) => cellModel(d, ctx))
      .sort((a, b) => natural(a.driver, b.driver) || natural(a.name, b.name));
    const chosen = models.find((m) => m.id === selected);
    if (chosen) byId("device-detail").textContent = cellDetail(chosen);
    const summary = nodeSummary(data.nodes.items.get(key));
    const signature = JSON.stringify([summary, models]);
    const cached = rowCache.get(key);
    if (cached && cached.signature === signature) { rows.push(cached.element); continue; }
    const element = el("div", { class: "row", data: { node: key } },
      el("div", { class: "node" },
        el("span", { class: "node-name" }, key),
        summary.ready ? el("span", { class: "ready " + summary.ready }, summary.ready) : null,
        ...summary.taints.map((t) => el("span", { class: "taint" }, t))),
      el("div", { class: "devices" }, ...deviceCells(models)));
    rowCache.set(key, { signature, element });
    rows.push(element);
  }
  const current = new Set(keys);
  for (const key of rowCache.keys()) if (!current.has(key)) rowCache.delete(key);
  grid.replaceChildren(...(rows.length ? rows : [el("p", { class: "muted" }, "no nodes")]));
  if (!firstGrid) {
    firstGrid = true;
    performance.mark("fakeapi-grid");
  }
}

onRender(["nodes", "resourceslices", "resourceclaims", "pods", "devicefaults", "nodefaults",
  "devicetaintrules"], renderGrid);

/** Forget the rows drawn (a new user's or revision's grid is drawn afresh). */
export function clearGrid() {
  rowCache.clear();
}
