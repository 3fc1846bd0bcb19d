// The page's shared parts: its state, the REST calls (same origin, JSON
// bodies, the key typed into the page), notices, progress, the messages
// of the chat, and a helper that builds elements.
export const $ = (id) => document.getElementById(id);

// state is what the page is showing: whose memory, as which agent, which
// conversation, and who the caller is (GET /v1/me).
export const state = { user: "", agent: "default", thread: "", busy: false, me: null, deleted: "" };

export function headers(extra) {
  const h = { "Content-Type": "application/json", "X-Agentmem-User": state.user, "X-Agentmem-Agent": state.agent };
  const key = $("apikey").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  if (state.thread) h["X-Agentmem-Thread"] = state.thread;
  return Object.assign(h, extra || {});
}

export function userPath() {
  return "/v1/users/" + encodeURIComponent(state.user);
}

export function threadPath(id) {
  return userPath() + "/threads/" + encodeURIComponent(id || state.thread);
}

export function agentPath() {
  return userPath() + "/agents/" + encodeURIComponent(state.agent);
}

// pending counts the requests in flight; progress shows after a moment.
let pending = 0;
let progressTimer = 0;

function progress(delta) {
  pending += delta;
  document.body.setAttribute("aria-busy", String(pending > 0));
  if (pending > 0 && !progressTimer) {
    progressTimer = setTimeout(() => { $("progress").hidden = pending === 0; }, 300);
  }
  if (pending === 0) {
    clearTimeout(progressTimer);
    progressTimer = 0;
    $("progress").hidden = true;
  }
}

// request is fetch with the page's headers, counted in the progress.
export async function request(method, path, body, extra) {
  progress(1);
  try {
    return await fetch(path, { method, headers: headers(extra), body: body === undefined ? undefined : JSON.stringify(body) });
  } finally {
    progress(-1);
  }
}

// api calls the REST API and returns its JSON; an error carries the
// API's message, status and code.
export async function api(method, path, body) {
  const res = await request(method, path, body);
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401) {
    // The API's message says how to send a key by hand; the page sends
    // the one typed into its box, so it asks for that instead.
    askForKey();
    const err = new Error(keyMessage());
    err.status = 401;
    err.code = data && data.error && data.error.code;
    throw err;
  }
  if (!res.ok) {
    const err = new Error((data && data.error && data.error.message) || res.status + " " + res.statusText);
    err.status = res.status;
    err.code = data && data.error && data.error.code;
    throw err;
  }
  return data;
}

export function notice(text) {
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

// keyMessage is what the page says when the server wants a key (401):
// where to enter it, or that the one entered was refused.
function keyMessage() {
  return $("apikey").value.trim()
    ? "The server did not accept this API key. Enter a valid API key in the API key box at the top of the page."
    : "This server needs an API key. Enter your API key in the API key box at the top of the page; this tab keeps it until you close it.";
}

// askForKey points at the page's API-key box: marked, described by the
// notice that says what to do, and focused.
export function askForKey() {
  const box = $("apikey");
  box.setAttribute("aria-invalid", "true");
  box.setAttribute("aria-describedby", "notice");
  box.placeholder = "Paste your API key";
  box.closest("label").classList.add("needed");
  notice(keyMessage());
  box.focus();
}

// keyAccepted takes the marks of askForKey off the key box.
export function keyAccepted() {
  const box = $("apikey");
  if (!box.hasAttribute("aria-invalid")) return;
  box.removeAttribute("aria-invalid");
  box.removeAttribute("aria-describedby");
  box.placeholder = "with --auth apikey";
  box.closest("label").classList.remove("needed");
  notice("");
}

// act runs a person's action and shows its error (a 401 has pointed at
// the key box already).
export async function act(fn) {
  try {
    await fn();
  } catch (e) {
    if (e.status !== 401) notice(e.message);
  }
}

// addMessage shows a message at the end of the chat, scrolled into view,
// and returns the element of its text.
export function addMessage(role, text, seq) {
  const body = el("span", { class: "text", text });
  const li = el("li", { class: "msg " + role, dataset: seq ? { seq: String(seq) } : {} }, el("span", { class: "role", text: role }), body);
  $("messages").append(li);
  li.scrollIntoView({ block: "end" });
  return body;
}

// el builds an element: props sets its class, text, data-*, on* listeners
// and attributes; children are appended.
export function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return e;
}

// confirmed makes a button ask once more before fn runs: the first click
// arms it ("Really …?"), the second runs fn; leaving it disarms it.
export function confirmed(button, question, fn) {
  const label = button.textContent;
  const disarm = () => {
    delete button.dataset.armed;
    button.textContent = label;
    button.classList.remove("danger");
  };
  button.addEventListener("blur", disarm);
  button.addEventListener("click", () => act(async () => {
    if (!button.dataset.armed) {
      button.dataset.armed = "true";
      button.textContent = question;
      button.classList.add("danger");
      return;
    }
    disarm();
    await fn();
  }));
}

// fill replaces a list's items by line(item) for each, or one item saying
// empty.
export function fill(list, items, line, empty) {
  list.replaceChildren(...items.map(line));
  if (items.length === 0 && empty) list.append(el("li", { class: "empty", text: empty }));
}

export function when(t) {
  return t ? new Date(t).toLocaleString() : "";
}

// short is a time as a list shows it: the hour today, the date before.
export function short(t) {
  const d = new Date(t);
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : d.toLocaleDateString();
}

export function plural(n, one, many) {
  return n + " " + (n === 1 ? one : many || one + "s");
}
