// fakeapi's web view: lists and watches the cluster through the ordinary API with the user's
// own credentials (a bearer token kept in sessionStorage, or the browser's client
// certificate), and renders what it holds at most every RENDER_EVERY_MS. Every string from
// the server reaches the page as text (textContent, title, value), never as markup.
//
// A browser keeps at most six HTTP/1.1 connections to one server, and each watch holds one:
// the four kinds that change all the time are watched, the few faults and taint rules and
// the event log are listed again every POLL_MS, which leaves connections for the rest.
"use strict";

(() => {
  const RENDER_EVERY_MS = 200;
  const TOKEN_KEY = "fakeapi.token";
  const PAGE = 500;
  const TIMELINE_KEEP = 2000;
  const TIMELINE_SHOWN = 300;
  const TIMELINE_BACK = 500;
  const EXPLAIN_AT_MOST = 20;
  const EXPLAIN_EVERY_MS = 1000;
  const LIST_AT_MOST = 500;
  const EMULATOR = "/apis/emulator.fakeapi.dev/v1alpha1/";
  const POLL_MS = 1000;
  const RESOURCES = {
    nodes: "/api/v1/nodes",
    resourceslices: "/apis/resource.k8s.io/v1/resourceslices",
    resourceclaims: "/apis/resource.k8s.io/v1/resourceclaims",
    pods: "/api/v1/pods",
    devicefaults: EMULATOR + "devicefaults",
    nodefaults: EMULATOR + "nodefaults",
    devicetaintrules: "/apis/resource.k8s.io/v1/devicetaintrules",
  };
  const OPTIONAL = new Set(["devicetaintrules"]); // behind a gate: 404 means "none"
  const POLLED = new Set(["devicefaults", "nodefaults", "devicetaintrules"]);
  const HEALTH_RANK = { Healthy: 0, Unknown: 1, Unhealthy: 2 };

  // ----- the API, with the user's identity ---------------------------------------------

  class ApiError extends Error {
    constructor(code, reason, message) {
      super(`${code} ${reason}: ${message}`);
      this.code = code;
    }
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY) || "";

  function headers(extra) {
    const h = { Accept: "application/json", ...extra };
    if (token()) h.Authorization = "Bearer " + token();
    return h;
  }

  async function failure(response) {
    const text = await response.text();
    let status = null;
    try { status = JSON.parse(text); } catch (e) { /* not a Status */ }
    if (status && status.kind === "Status") {
      return new ApiError(status.code || response.status, status.reason || "", status.message || "");
    }
    return new ApiError(response.status, response.statusText, text.slice(0, 200));
  }

  async function call(method, path, body, signal) {
    const init = { method, cache: "no-store", signal,
      headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(path, init);
    if (!response.ok) throw await failure(response);
    return response.status === 204 ? null : response.json();
  }

  async function* jsonLines(response) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      let end;
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end).trim();
        buffered = buffered.slice(end + 1);
        if (line) yield JSON.parse(line);
      }
    }
  }

  async function stream(path, signal) {
    const response = await fetch(path, { headers: headers(), cache: "no-store", signal });
    if (!response.ok) throw await failure(response);
    return jsonLines(response);
  }

  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const keyOf = (o) => (o.metadata.namespace ? o.metadata.namespace + "/" : "") + o.metadata.name;

  // ----- collections: list, then watch from the list's revision ------------------------

  class Collection {
    constructor(name, path) {
      this.name = name;
      this.path = path;
      this.polled = POLLED.has(name);
      this.signature = "";
      this.items = new Map();
      this.loaded = false;
      this.error = null;
      this.missing = false;
      this.controller = null;
    }

    start() {
      this.controller = new AbortController();
      this.run(this.controller.signal);
    }

    stop() {
      if (this.controller) this.controller.abort();
      this.items = new Map();
      this.signature = "";
      this.loaded = false;
      this.error = null;
    }

    async run(signal) {
      let revision = null;
      let backoff = 500;
      while (!signal.aborted) {
        try {
          if (this.polled) {
            await this.list(signal);
            await sleep(POLL_MS);
            continue;
          }
          if (revision === null) revision = await this.list(signal);
          revision = await this.watch(revision, signal);
          backoff = 500;
        } catch (e) {
          if (signal.aborted) return;
          revision = null;
          if (e.code === 410) continue; // expired: list again
          if (e.code === 404 && OPTIONAL.has(this.name)) {
            this.missing = true;
            this.loaded = true;
            changed(this.name);
            return;
          }
          this.error = e;
          changed(this.name);
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 10000);
        }
      }
    }

    async list(signal) {
      const items = new Map();
      let next = "";
      let revision;
      do {
        const query = `?limit=${PAGE}` + (next ? "&continue=" + encodeURIComponent(next) : "");
        const page = await call("GET", this.path + query, undefined, signal);
        for (const o of page.items || []) items.set(keyOf(o), o);
        next = page.metadata.continue || "";
        revision = page.metadata.resourceVersion;
      } while (next);
      signal.throwIfAborted(); // a stopped collection's late answer is not the new user's
      const signature = [...items.values()].map((o) => o.metadata.resourceVersion).join(",");
      const same = this.loaded && !this.error && signature === this.signature;
      this.items = items;
      this.signature = signature;
      this.loaded = true;
      this.error = null;
      if (!same) changed(this.name);
      return revision;
    }

    async watch(revision, signal) {
      const query = `?watch=1&allowWatchBookmarks=true&resourceVersion=${revision}`;
      for await (const event of await stream(this.path + query, signal)) {
        if (event.type === "ERROR") {
          const s = event.object || {};
          throw new ApiError(s.code || 500, s.reason || "", s.message || "");
        }
        signal.throwIfAborted();
        revision = event.object.metadata.resourceVersion;
        if (event.type === "BOOKMARK") continue;
        if (event.type === "DELETED") this.items.delete(keyOf(event.object));
        else this.items.set(keyOf(event.object), event.object);
        changed(this.name);
      }
      return revision;
    }
  }

  const data = {};
  for (const [name, path] of Object.entries(RESOURCES)) data[name] = new Collection(name, path);

  // ----- the timeline: the server's event log, followed -------------------------------

  const timeline = { entries: [], error: null, controller: null };

  async function followLog() {
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

  // ----- pending pods' explanations (the scheduler's /explain, as `fakeapi explain pod`) -

  const explanations = new Map(); // pod key -> {version, epoch, report | error}
  let clusterEpoch = 0; // bumped when anything a verdict depends on changes
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
    if (explainTimer !== null) return;
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
      if (known && known.version === version && known.epoch === clusterEpoch) return;
      const epoch = clusterEpoch;
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

  // ----- rendering, coalesced -----------------------------------------------------------

  const dirty = new Set();
  let renderTimer = null;
  let lastRender = 0;
  let firstGrid = false;

  function changed(what) {
    dirty.add(what);
    if (["nodes", "resourceslices", "resourceclaims", "devicetaintrules"].includes(what)) {
      clusterEpoch += 1;
    }
    if (renderTimer !== null) return;
    const wait = Math.max(0, lastRender + RENDER_EVERY_MS - performance.now());
    renderTimer = setTimeout(() => requestAnimationFrame(render), wait);
  }

  const touched = (...names) => names.some((n) => dirty.has(n));

  function render() {
    renderTimer = null;
    lastRender = performance.now();
    const all = dirty.has("all");
    if (all || touched("nodes", "resourceslices", "resourceclaims", "pods", "devicefaults",
      "nodefaults", "devicetaintrules")) renderGrid();
    if (all || touched("pods", "explanations", "resourceclaims", "resourceslices", "nodes")) {
      renderPending();
      scheduleExplain();
    }
    if (all || touched("resourceclaims")) renderClaims();
    if (all || touched("devicefaults", "nodefaults", "rights")) renderFaults();
    if (all || touched("timeline", "filter")) renderTimeline();
    renderErrors();
    dirty.clear();
  }

  function el(tag, props, ...children) {
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

  const byId = (id) => document.getElementById(id);
  const natural = new Intl.Collator(undefined, { numeric: true }).compare;

  function errorBox(what, error) {
    return el("div", { class: "error", data: { resource: what } },
      `Can't read ${what}: ${error.message}`);
  }

  function renderErrors() {
    const box = byId("errors");
    const shown = [];
    for (const c of Object.values(data)) if (c.error) shown.push(errorBox(c.name, c.error));
    box.replaceChildren(...shown);
    const live = Object.values(data).every((c) => c.loaded && !c.error);
    byId("status").textContent = live ? "live" : shown.length ? "errors" : "loading…";
    byId("status").className = live ? "live" : "muted";
  }

  // ----- the cluster grid -------------------------------------------------------------

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

  // ----- pending pods -----------------------------------------------------------------

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

  async function checkRights() {
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

  function renderFaults() {
    const box = byId("faults");
    const rows = [];
    for (const name of ["devicefaults", "nodefaults"]) {
      const c = data[name];
      if (c.error) { rows.push(errorBox(name, c.error)); continue; }
      for (const f of [...c.items.values()].sort((a, b) => natural(keyOf(a), keyOf(b)))) {
        const s = f.spec || {};
        const what = name === "devicefaults" ? `${s.nodeName} ${s.driver}/${s.device}` : s.nodeName;
        const heal = el("button", { type: "button", disabled: !rights.delete,
          title: rights.delete ? "delete the fault" : "you may not delete faults" }, "Heal");
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
    for (const input of form.elements) input.disabled = !rights.create;
    byId("fault-note").textContent = rights.create ? "" : "you may not create DeviceFaults";
  }

  function note(text) {
    byId("fault-note").textContent = text;
  }

  async function applyFault(event) {
    event.preventDefault();
    if (!rights.create) return;
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

  // ----- the timeline -----------------------------------------------------------------

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
      rows.push(el("details", { class: "entry", data: { revision: e.revision } },
        el("summary", {}, ...fields.map((f) => el("span", {}, f))),
        el("pre", {}, diff.join("\n"))));
    }
    box.replaceChildren(...(rows.length ? rows : [el("p", { class: "muted" }, "no events")]));
  }

  // ----- signing in and out -----------------------------------------------------------

  async function whoAmI() {
    try {
      const review = await call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
      const user = ((review.status || {}).userInfo || {}).username || "?";
      byId("whoami").textContent = "signed in as " + user;
    } catch (e) {
      byId("whoami").textContent = e.code === 401 ? "the token was refused" : e.message;
    }
  }

  function start() {
    for (const c of Object.values(data)) c.start();
    followLog();
    whoAmI();
    checkRights();
    byId("logout").hidden = !token();
    byId("login").hidden = Boolean(token());
  }

  function restart() {
    for (const c of Object.values(data)) c.stop();
    if (timeline.controller) timeline.controller.abort();
    timeline.entries = [];
    timeline.error = null;
    explanations.clear();
    rowCache.clear();
    changed("all");
    start();
  }

  document.addEventListener("DOMContentLoaded", () => {
    byId("login").addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, byId("token").value.trim());
      byId("token").value = "";
      restart();
    });
    byId("logout").addEventListener("click", () => {
      sessionStorage.removeItem(TOKEN_KEY);
      restart();
    });
    byId("fault-form").addEventListener("submit", applyFault);
    byId("timeline-filter").addEventListener("input", () => changed("filter"));
    changed("all");
    start();
  });
})();
