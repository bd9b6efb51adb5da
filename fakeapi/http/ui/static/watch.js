// The collections: each kind listed, then watched from the list's revision. A browser keeps
// at most six HTTP/1.1 connections to one server and each watch holds one, so the four kinds
// that change all the time are watched and the few faults and taint rules are listed again
// every POLL_MS. At a past revision (time travel) each kind is listed once at exactly that
// revision (resourceVersionMatch=Exact: the log's old versions) and nothing is watched.

import { ApiError, call, keyOf, sleep, stream } from "./api.js";
import { changed, state } from "./view.js";

const PAGE = 500;
const POLL_MS = 1000;
const EMULATOR = "/apis/emulator.fakeapi.dev/v1alpha1/";

/** Each kind the page reads, by its plural: the path of its list. */
export const RESOURCES = {
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

/** One kind's objects by key, kept current (or as they were at `state.revision`). */
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
    this.revision = null; // the revision of what `items` holds
  }

  start() {
    this.controller = new AbortController();
    this.run(this.controller.signal, state.revision);
  }

  stop() {
    if (this.controller) this.controller.abort();
    this.items = new Map();
    this.signature = "";
    this.loaded = false;
    this.error = null;
    this.revision = null;
  }

  async run(signal, past) {
    let revision = null;
    let backoff = 500;
    while (!signal.aborted) {
      try {
        if (past !== null) {
          await this.list(signal, past);
          return;
        }
        if (this.polled) {
          await this.list(signal, null);
          await sleep(POLL_MS);
          continue;
        }
        if (revision === null) revision = await this.list(signal, null);
        revision = await this.watch(revision, signal);
        backoff = 500;
      } catch (e) {
        if (signal.aborted) return;
        revision = null;
        if (e.code === 410 && past === null) continue; // expired: list again
        if (e.code === 404 && OPTIONAL.has(this.name)) {
          this.missing = true;
          this.loaded = true;
          changed(this.name);
          return;
        }
        this.error = e;
        changed(this.name);
        if (past !== null) return; // compacted away (410): said, not retried
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 10000);
      }
    }
  }

  async list(signal, at) {
    const items = new Map();
    let next = "";
    let revision;
    do {
      const query = `?limit=${PAGE}` + (next ? "&continue=" + encodeURIComponent(next)
        : at !== null ? `&resourceVersion=${at}&resourceVersionMatch=Exact` : "");
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
    this.revision = revision;
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
      revision = this.revision = event.object.metadata.resourceVersion;
      if (event.type === "BOOKMARK") continue;
      if (event.type === "DELETED") this.items.delete(keyOf(event.object));
      else this.items.set(keyOf(event.object), event.object);
      changed(this.name);
    }
    return revision;
  }
}

/** The page's collections, by plural. */
export const data = {};
for (const [name, path] of Object.entries(RESOURCES)) data[name] = new Collection(name, path);

/** Read every collection again from the start: live, or at `state.revision`. */
export function reload() {
  for (const c of Object.values(data)) c.stop();
  for (const c of Object.values(data)) c.start();
  changed("all");
}

/** Show the cluster as it was at `revision` (null: back to live), read-only. */
export function travel(revision) {
  state.revision = revision;
  reload();
}
