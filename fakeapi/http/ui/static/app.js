// fakeapi's web view: lists and watches the cluster through the ordinary API with the user's
// own credentials, and renders what it holds. The modules: api (requests with the user's
// identity), view (coalesced rendering, DOM from text), watch (the collections, live or at a
// past revision), grid, panels (pending pods, claims, faults), timeline (the event log and
// time travel). This one signs in and out, says what state the page is in, and starts it all.

import { TOKEN_KEY, call, token } from "./api.js";
import { clearGrid } from "./grid.js";
import { checkRights, clearExplanations, wireFaults } from "./panels.js";
import { followLog, stopLog, wireTimeline } from "./timeline.js";
import { byId, changed, errorBox, onRender, state } from "./view.js";
import { data, reload } from "./watch.js";

function renderErrors() {
  const box = byId("errors");
  const shown = [];
  for (const c of Object.values(data)) if (c.error) shown.push(errorBox(c.name, c.error));
  box.replaceChildren(...shown);
  const loaded = Object.values(data).every((c) => c.loaded && !c.error);
  const status = byId("status");
  status.textContent = shown.length ? "errors" : !loaded ? "loading…"
    : state.revision === null ? "live" : `revision ${state.revision}`;
  status.className = loaded && state.revision === null ? "live" : loaded ? "past" : "muted";
  // what the page has drawn, for anyone measuring how far it is behind the server
  for (const name of ["pods", "resourceclaims"]) {
    document.body.dataset[name + "Revision"] = data[name].revision ?? "";
  }
}

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
  reload();
  followLog();
  whoAmI();
  checkRights();
  byId("logout").hidden = !token();
  byId("login").hidden = Boolean(token());
}

function restart() {
  stopLog();
  clearExplanations();
  clearGrid();
  state.revision = null;
  changed("travel");
  start();
}

onRender(null, renderErrors);

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
  wireFaults();
  wireTimeline();
  changed("all");
  start();
});
