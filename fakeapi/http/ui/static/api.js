// The API, with the user's own identity: a bearer token kept in sessionStorage (sent as
// Authorization, a header a cross-site form cannot set), or the browser's client certificate.
// Failures come back as the Status the server sent.

export const TOKEN_KEY = "fakeapi.token";

/** A failed call: the Status's code, reason and message. */
export class ApiError extends Error {
  constructor(code, reason, message) {
    super(`${code} ${reason}: ${message}`);
    this.code = code;
  }
}

/** The signed-in user's bearer token ("" for none: the client certificate, or anonymous). */
export const token = () => sessionStorage.getItem(TOKEN_KEY) || "";

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

/** One request with a JSON body (or none); its JSON answer, or the ApiError. */
export async function call(method, path, body, signal) {
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

/** A streamed answer (a watch, the log) as its JSON lines. */
export async function stream(path, signal) {
  const response = await fetch(path, { headers: headers(), cache: "no-store", signal });
  if (!response.ok) throw await failure(response);
  return jsonLines(response);
}

/** Resolve after `ms` milliseconds. */
export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** An object's key: "namespace/name", or its name. */
export const keyOf = (o) => (o.metadata.namespace ? o.metadata.namespace + "/" : "") + o.metadata.name;
