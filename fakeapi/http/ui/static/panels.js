// The panels beside the grid: pending pods with the scheduler's explanation (its /explain
// route, the answer `fakeapi explain pod` prints), the claims, and the faults, which a user
// with the rights applies and heals with ordinary writes under their own identity. At a past
// revision the panels show that revision's objects, and write nothing: the explanations and
// the fault form are the live cluster's.

import { call, keyOf } from "./api.js";
import { byId, changed, el, errorBox, natural, onRender, state } from "./view.js";
import { RESOURCES, data } from "./watch.js";

const EXPLAIN_AT_MOST = 20;
const EXPLAIN_EVERY_MS = 1000;
const LIST_AT_MOST = 500;

// ----- pending pods' explanations ---------------------------------------------------

const explanations = new Map(); // pod key -> {version, epoch, report | error}
let explainTimer = null;

function pendingPods() {
  const pods = [...data.pods.items.values()].filter((p) =>
    !(p.spec || {}).nodeName && !p.metadata.deletionTimestamp &&
    ((p.status || {}).phase || "Pending") === "Pending");
  pods.sort((a, b) => (a.metadata.creationTimestamp || "").localeCompare(
    b.metadata.creationTimestamp || "") || keyOf(a).localeCompare(keyOf(b)));
  return pods;
}

function scheduleExplain() {
  if (explainTimer !== null || state.revision !== null) return;
  explainTimer = setTimeout(explainPending, EXPLAIN_EVERY_MS);
}

async function explainPending() {
  const pods = pendingPods().slice(0, EXPLAIN_AT_MOST);
  const wanted = new Set(pods.map(keyOf));
  for (const key of explanations.keys()) if (!wanted.has(key)) explanations.delete(key);
  await Promise.all(pods.map(async (pod) => {
    const key = keyOf(pod);
    const known = explanations.get(key);
    const version = pod.metadata.resourceVersion;
    if (known && known.version === version && known.epoch === state.epoch) return;
    const epoch = state.epoch;
    const path = `/explain/namespaces/${encodeURIComponent(pod.metadata.namespace)}` +
      `/pods/${encodeURIComponent(pod.metadata.name)}`;
    try {
      explanations.set(key, { version, epoch, report: await call("GET", path) });
    } catch (e) {
      explanations.set(key, { version, epoch, error: e });
    }
  }));
  explainTimer = null;
  changed("explanations");
}

// ----- pending pods -------------------------------------------------------------

function requestsNeeded(pod) {
  const needed = new Map(); // "ns/claim" -> request name -> what it asks
  for (const c of data.resourceclaims.items.values()) {
    if (c.metadata.namespace !== pod.metadata.namespace) continue;
    const asks = new Map();
    for (const r of ((c.spec || {}).devices || {}).requests || []) {
      const e = r.exactly || {};
      asks.set(r.name, r.firstAvailable ? "one of " + r.firstAvailable.length + " subrequests" :
        e.allocationMode === "All" ? "all matching" : `${e.count || 1} of ${e.deviceClassName}`);
    }
    needed.set(keyOf(c), asks);
  }
  return needed;
}

function explanationView(pod, known) {
  if (state.revision !== null) {
    return [el("p", { class: "muted" }, "pending at this revision (the scheduler explains " +
      "only the live cluster)")];
  }
  if (!known) return [el("p", { class: "muted" }, "asking the scheduler…")];
  if (known.error) return [errorBox("the explanation", known.error)];
  const r = known.report;
  const out = [el("p", {}, `state: ${r.state}`)];
  if (r.message) out.push(el("p", {}, `last message: ${r.message}`));
  if (r.preFilter) out.push(el("p", {}, `before any node: ${r.preFilter}`));
  const needed = requestsNeeded(pod);
  const verdicts = new Map(); // one line per distinct verdict, with its nodes
  for (const n of r.nodes || []) {
    const lines = n.feasible ? ["fits"] : [`${n.plugin}: ${(n.reasons || []).join(", ")}`,
      ...(n.devices || []).map((d) => {
        const asks = (needed.get(d.claim) || new Map()).get(d.request);
        const causes = Object.entries(d.ruledOut || {}).map(([c, k]) => `${k} ${c}`);
        return `claim ${d.claim}, request ${d.request}` + (asks ? ` (needs ${asks})` : "") +
          `: ${causes.length ? causes.join(", ") : "no candidate devices"}`;
      })];
    const id = lines.join("\n");
    if (!verdicts.has(id)) verdicts.set(id, { lines, nodes: [] });
    verdicts.get(id).nodes.push(n.node);
  }
  const list = el("ul", { class: "verdicts" });
  for (const v of verdicts.values()) {
    const names = v.nodes.length > 5 ? `${v.nodes.slice(0, 5).join(", ")} and ${v.nodes.length - 5} more`
      : v.nodes.join(", ");
    list.append(el("li", {}, `${names}: ${v.lines[0]}`,
      ...v.lines.slice(1).map((l) => el("div", { class: "request" }, l))));
  }
  if (verdicts.size) out.push(list);
  return out;
}

function renderPending() {
  const box = byId("pending");
  if (data.pods.error) { box.replaceChildren(errorBox("pods", data.pods.error)); return; }
  const pods = pendingPods();
  const shown = pods.slice(0, EXPLAIN_AT_MOST).map((p) =>
    el("div", { class: "pending", data: { pod: keyOf(p) } },
      el("h3", {}, keyOf(p)), ...explanationView(p, explanations.get(keyOf(p)))));
  if (pods.length > shown.length) {
    shown.push(el("p", { class: "muted" }, `and ${pods.length - shown.length} more`));
  }
  box.replaceChildren(...(shown.length ? shown : [el("p", { class: "muted" }, "none")]));
}

// ----- claims -----------------------------------------------------------------------

function renderClaims() {
  const box = byId("claims");
  const c = data.resourceclaims;
  if (c.error) { box.replaceChildren(errorBox("resourceclaims", c.error)); return; }
  const claims = [...c.items.values()].sort((a, b) => natural(keyOf(a), keyOf(b)));
  const table = el("table", {}, el("tr", {}, ...["claim", "owner", "allocation", "reserved for",
    "device status"].map((h) => el("th", {}, h))));
  for (const claim of claims.slice(0, LIST_AT_MOST)) {
    const status = claim.status || {};
    const results = ((status.allocation || {}).devices || {}).results || [];
    const owners = (claim.metadata.ownerReferences || []).map((o) => `${o.kind} ${o.name}`);
    const devices = (status.devices || []).map((d) => `${d.driver}/${d.pool}/${d.device}: ` +
      ((d.conditions || []).filter((k) => k.status === "True").map((k) => k.type).join(", ") || "-"));
    table.append(el("tr", { data: { claim: keyOf(claim) } },
      el("td", {}, keyOf(claim)),
      el("td", {}, owners.join(", ") || "-"),
      el("td", {}, results.map((r) => `${r.request}: ${r.driver}/${r.pool}/${r.device}` +
        (r.shareID ? ` (share ${r.shareID})` : "")).join("\n") || "not allocated"),
      el("td", {}, (status.reservedFor || []).map((r) => `${r.resource} ${r.name}`).join("\n") || "-"),
      el("td", {}, devices.join("\n") || "-")));
  }
  const more = claims.length > LIST_AT_MOST ? el("p", { class: "muted" },
    `and ${claims.length - LIST_AT_MOST} more`) : null;
  box.replaceChildren(...(claims.length ? [table] : [el("p", { class: "muted" }, "none")]),
    ...(more ? [more] : []));
}

// ----- faults: shown, applied and healed with the user's own writes -----------------

const rights = { create: false, delete: false };

/** Ask the server (SelfSubjectAccessReviews) whether the user may create and delete
 * DeviceFaults: the form and the Heal buttons are enabled only then. */
export async function checkRights() {
  for (const verb of ["create", "delete"]) {
    try {
      const review = await call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { group: "emulator.fakeapi.dev", resource: "devicefaults", verb } },
      });
      rights[verb] = Boolean((review.status || {}).allowed);
    } catch (e) {
      rights[verb] = false;
    }
  }
  changed("rights");
}

const writable = (verb) => rights[verb] && state.revision === null;
const refusal = (verb) => state.revision !== null ? "read-only: a past revision is shown"
  : verb === "create" ? "you may not create DeviceFaults" : "you may not delete faults";

function renderFaults() {
  const box = byId("faults");
  const rows = [];
  for (const name of ["devicefaults", "nodefaults"]) {
    const c = data[name];
    if (c.error) { rows.push(errorBox(name, c.error)); continue; }
    for (const f of [...c.items.values()].sort((a, b) => natural(keyOf(a), keyOf(b)))) {
      const s = f.spec || {};
      const what = name === "devicefaults" ? `${s.nodeName} ${s.driver}/${s.device}` : s.nodeName;
      const heal = el("button", { type: "button", disabled: !writable("delete"),
        title: writable("delete") ? "delete the fault" : refusal("delete") }, "Heal");
      heal.addEventListener("click", () => healFault(name, f.metadata.name));
      rows.push(el("div", { class: "fault", data: { fault: f.metadata.name } },
        el("span", { class: "fault-kind" }, name === "devicefaults" ? "DeviceFault" : "NodeFault"),
        el("span", {}, f.metadata.name), el("span", {}, what),
        el("span", {}, s.mode || (name === "devicefaults" ? "Unhealthy" : "StopHeartbeat")),
        el("span", { class: "fault-message" }, s.message || ""), heal));
    }
  }
  box.replaceChildren(...(rows.length ? rows : [el("p", { class: "muted" }, "none")]));
  const form = byId("fault-form");
  for (const input of form.elements) input.disabled = !writable("create");
  byId("fault-note").textContent = writable("create") ? "" : refusal("create");
}

function note(text) {
  byId("fault-note").textContent = text;
}

async function applyFault(event) {
  event.preventDefault();
  if (!writable("create")) return;
  const spec = { nodeName: byId("fault-node").value, driver: byId("fault-driver").value,
    device: byId("fault-device").value, mode: byId("fault-mode").value };
  const message = byId("fault-message").value;
  if (message) spec.message = message;
  try {
    const made = await call("POST", RESOURCES.devicefaults, {
      apiVersion: "emulator.fakeapi.dev/v1alpha1", kind: "DeviceFault",
      metadata: { generateName: "ui-" }, spec });
    note(`applied ${made.metadata.name}`);
  } catch (e) {
    note(e.message);
  }
}

async function healFault(resource, name) {
  try {
    await call("DELETE", `${RESOURCES[resource]}/${encodeURIComponent(name)}`);
    note(`healed ${name}`);
  } catch (e) {
    note(e.message);
  }
}

/** Forget the explanations asked for (another user's or revision's are asked again). */
export function clearExplanations() {
  explanations.clear();
}

/** Wire the fault form. */
export function wireFaults() {
  byId("fault-form").addEventListener("submit", applyFault);
}

onRender(["pods", "explanations", "resourceclaims", "resourceslices", "nodes"], () => {
  renderPending();
  scheduleExplain();
});
onRender(["resourceclaims"], renderClaims);
onRender(["devicefaults", "nodefaults", "rights"], renderFaults);
