// The inspector: exactly what the model is sent (the context's sections
// and tokens, what was left out), the background work, and what is
// remembered: memories, profile, entities, notes, and a search over it all.
import { $, state, api, act, el, confirmed, notice, fill, when, plural, userPath, threadPath, agentPath } from "./api.js";

// openThread opens a conversation where a memory or a search result came
// from: threads.js's, given to wireInspector (threads.js imports this
// module, so importing it back would make a cycle).
let openThread = async () => {};

// inspect shows the context a model would get now, and what is
// remembered.
export async function inspect() {
  await Promise.all([showContext(), showJobs(), showMemories(), showProfile(), showEntities(), showNotes()]);
}

async function showContext() {
  const tbody = $("sections").querySelector("tbody");
  tbody.replaceChildren();
  $("warnings").replaceChildren();
  $("omitted").replaceChildren();
  $("lag").textContent = "";
  $("used").textContent = "0";
  $("budget").textContent = "0";
  $("gauge").value = 0;
  $("sections").hidden = true;
  if (!state.thread) {
    $("context-empty").hidden = false;
    return;
  }
  let c;
  try {
    c = await api("POST", threadPath() + "/context", {});
  } catch (e) {
    $("context-empty").hidden = false;
    if (e.status !== 404) notice(e.message);
    return;
  }
  $("context-empty").hidden = true;
  $("sections").hidden = false;
  const t = c.telemetry;
  $("used").textContent = t.used_tokens;
  $("budget").textContent = t.budget_tokens;
  $("gauge").value = t.fraction;
  $("gauge").title = Math.round(t.fraction * 100) + "% of the budget";
  for (const [name, n] of Object.entries(t.sections).sort((a, b) => b[1] - a[1])) {
    tbody.append(el("tr", {}, el("td", { text: name }), el("td", { text: String(n) })));
  }
  const lag = [];
  if (t.index_lag > 0) lag.push("indexing is " + plural(t.index_lag, "message") + " behind");
  if (t.summary_lag > 0 && t.summary_behind) lag.push("the summary is " + plural(t.summary_lag, "message") + " behind");
  $("lag").textContent = lag.length ? "Background work: " + lag.join("; ") + "." : "";
  for (const w of t.warnings) $("warnings").append(el("li", { text: w }));
  for (const r of t.omitted_seqs || []) $("omitted").append(omittedRange(r, t.summary_through_seq));
}

// omittedRange is a range of messages not in the context verbatim, which
// opens to show them.
function omittedRange(r, summaryThrough) {
  const how = summaryThrough >= r.to ? "summarised" : "left out";
  const details = el("details", {}, el("summary", { text: "Messages " + r.from + (r.to > r.from ? "–" + r.to : "") + " " + how }));
  details.addEventListener("toggle", () => act(async () => {
    if (!details.open || details.dataset.loaded) return;
    details.dataset.loaded = "true";
    const m = await api("GET", threadPath() + "/messages?after_seq=" + (r.from - 1) + "&before_seq=" + (r.to + 1) + "&limit=50");
    details.append(el("ol", {}, ...m.data.map((msg) => el("li", { text: msg.seq + " " + msg.role + ": " + msg.content }))));
    if (m.next_cursor) details.append(el("p", { class: "muted", text: "… and more: see the export." }));
  }));
  return el("li", {}, details);
}

// showJobs shows the user's background work: jobs waiting or running, and
// failed ones with a retry.
export async function showJobs() {
  let active, dead;
  try {
    [active, dead] = await Promise.all(["queued", "running", "dead"].map((s) => api("GET", userPath() + "/jobs?limit=20&status=" + s)))
      .then(([q, r, d]) => [r.data.concat(q.data), d.data]);
  } catch (e) {
    $("jobs").replaceChildren(el("li", { class: "empty", text: "The jobs cannot be read: " + e.message }));
    return;
  }
  fill($("jobs"), active.concat(dead), (j) => {
    const li = el("li", { dataset: { job: j.id, status: j.status } },
      el("span", { text: j.kind + " " + j.status + (j.status === "queued" ? " since " + when(j.created_at) : "") + (j.attempts ? ", attempt " + j.attempts + " of " + j.max_attempts : "") }));
    if (j.status === "dead") {
      li.append(el("span", { class: "muted", text: " " + (j.last_error || "failed") + " " }),
        el("button", { type: "button", class: "small retry", text: "Retry", "aria-label": "Retry the failed " + j.kind + " job",
          onclick: () => act(async () => { await api("POST", userPath() + "/jobs/" + encodeURIComponent(j.id) + "/retry"); await showJobs(); }) }));
    }
    return li;
  }, "None: everything is up to date.");
}

// showMemories lists the memories (the invalidated too when asked), each
// with its category, confidence, validity on a timeline, the
// conversation it came from and its history; each can be edited,
// invalidated and deleted.
export async function showMemories() {
  const list = $("memories");
  let m;
  try {
    m = await api("GET", userPath() + "/memories?limit=100" + ($("show-invalid").checked ? "&include_invalid=true" : ""));
  } catch (e) {
    list.replaceChildren();
    notice(e.message);
    return;
  }
  // The timeline runs from the oldest memory's start to now.
  const now = Date.now();
  const start = Math.min(now - 1000, ...m.data.map((x) => Date.parse(x.valid_from)));
  list.replaceChildren(...m.data.map((mem) => memoryItem(mem, start, now)));
  $("memories-empty").hidden = m.data.length > 0;
}

function memoryItem(mem, start, now) {
  const li = el("li", { dataset: { memory: mem.id }, class: mem.invalid_at ? "invalid" : "" });
  const text = el("span", { class: "text", text: mem.text });
  const meta = [mem.kind === "insight" ? "insight" : "", mem.category, "confidence " + Math.round(mem.confidence * 100) + "%",
    mem.invalid_at ? "valid " + when(mem.valid_from) + " – " + when(mem.invalid_at) : "valid since " + when(mem.valid_from)].filter(Boolean);
  const from = Date.parse(mem.valid_from);
  const to = mem.invalid_at ? Date.parse(mem.invalid_at) : now;
  const bar = el("span", { class: "range" });
  const left = Math.min(98, Math.max(0, ((from - start) / (now - start)) * 100));
  bar.style.left = left + "%";
  bar.style.width = Math.min(100 - left, Math.max(2, ((to - from) / (now - start)) * 100)) + "%";
  const timeline = el("span", { class: "timeline", role: "img", "aria-label": meta[meta.length - 1] }, bar);
  const source = mem.thread_id
    ? el("button", { type: "button", class: "link", text: "from a conversation" + (mem.seq_from ? ", messages " + mem.seq_from + (mem.seq_to > mem.seq_from ? "–" + mem.seq_to : "") : ""),
      onclick: () => act(() => openThread(mem.thread_id, mem.seq_from, mem.seq_to)) })
    : el("span", { text: mem.source === "api" ? "written through the API" : "" });
  const edit = el("button", { type: "button", class: "edit small", text: "Edit", "aria-label": "Edit the memory: " + mem.text, onclick: () => editMemory(li, mem, text) });
  const invalidate = mem.invalid_at ? null : el("button", { type: "button", class: "invalidate small", text: "No longer true", "aria-label": "Mark as no longer true: " + mem.text });
  if (invalidate) {
    confirmed(invalidate, "Really invalidate?", async () => {
      await api("POST", userPath() + "/memories/" + encodeURIComponent(mem.id) + "/invalidate", { reason: "invalidated in the web UI" });
      await showMemories();
    });
  }
  const del = el("button", { type: "button", class: "forget small", text: "Delete", "aria-label": "Delete the memory: " + mem.text });
  confirmed(del, "Really delete?", async () => {
    await api("DELETE", userPath() + "/memories/" + encodeURIComponent(mem.id));
    li.remove();
    $("memories-empty").hidden = $("memories").children.length > 0;
  });
  const hist = el("details", { class: "history" }, el("summary", { text: "History" }));
  hist.addEventListener("toggle", () => act(async () => {
    if (!hist.open || hist.dataset.loaded) return;
    hist.dataset.loaded = "true";
    const h = await api("GET", userPath() + "/memories/" + encodeURIComponent(mem.id) + "/history");
    hist.append(el("ol", {}, ...h.data.map((c) => el("li", {
      text: "v" + c.version + " " + c.op + " " + when(c.at || c.created_at) + ": " + c.text +
        (c.thread_id ? " (from " + c.thread_id + (c.seq_from ? ", messages " + c.seq_from + "–" + c.seq_to : "") + ")" : "") + (c.reason ? " — " + c.reason : ""),
    }))));
  }));
  li.append(text, el("span", { class: "meta muted", text: meta.join(" · ") }), el("span", { class: "source muted" }, source), timeline, el("span", { class: "actions" }, edit, invalidate, del), hist);
  return li;
}

function editMemory(li, mem, text) {
  if (li.querySelector("form")) return;
  const input = el("input", { "aria-label": "The memory's text", required: true });
  input.value = mem.text;
  const form = el("form", { class: "toolbar" }, input, el("button", { type: "submit", text: "Save" }),
    el("button", { type: "button", text: "Cancel", onclick: () => form.remove() }));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    act(async () => {
      const updated = await api("PATCH", userPath() + "/memories/" + encodeURIComponent(mem.id), { text: input.value.trim(), reason: "edited in the web UI" });
      mem.text = updated.text;
      text.textContent = updated.text;
      form.remove();
    });
  });
  li.append(form);
  input.focus();
}

// showProfile shows the user's profile and its earlier versions.
async function showProfile() {
  const versions = $("profile-versions").querySelector("ol");
  versions.replaceChildren();
  $("profile-versions").hidden = true;
  try {
    const p = await api("GET", userPath() + "/profile");
    $("profile").textContent = p.text;
    $("profile-version").textContent = "version " + p.version;
    const all = await api("GET", userPath() + "/profile/versions?limit=20");
    for (const v of all.data) {
      if (v.version !== p.version) versions.append(el("li", { text: "Version " + v.version + " (" + when(v.created_at) + "):\n" + v.text }));
    }
    $("profile-versions").hidden = versions.children.length === 0;
  } catch (e) {
    $("profile-version").textContent = "";
    $("profile").textContent = e.status === 404 ? "No profile yet: it is written when a conversation has ended and been reflected on." : e.message;
  }
}

// showEntities lists the named things the user talks about, each opening
// to the conversations that mention it.
async function showEntities() {
  let res;
  try {
    res = await api("GET", userPath() + "/entities?limit=50");
  } catch (e) {
    notice(e.message);
    return;
  }
  $("entities").replaceChildren(...res.data.map((e) => {
    const details = el("details", { dataset: { entity: e.id } }, el("summary", {}, e.name, e.type ? el("span", { class: "muted", text: " " + e.type }) : null));
    details.addEventListener("toggle", () => act(async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "true";
      const refs = await api("GET", userPath() + "/entities/" + encodeURIComponent(e.id) + "/threads?limit=20");
      const ul = el("ul");
      fill(ul, refs.data, (r) => el("li", {}, el("button", { type: "button", class: "link", text: r.action + " in " + r.thread_id + (r.seq ? " (message " + r.seq + ")" : "") + ", " + when(r.at),
        onclick: () => act(() => openThread(r.thread_id, r.seq)) })), "In no conversation.");
      details.append(ul);
    }));
    return el("li", {}, details);
  }));
  $("entities-empty").hidden = res.data.length > 0;
}

async function showNotes() {
  try {
    const n = await api("GET", agentPath() + "/notes");
    $("notes").value = n.content;
    $("notes").dataset.version = n.version;
    $("notes-version").textContent = n.version ? "version " + n.version : "none yet";
    await showNotesHistory();
  } catch (e) {
    notice(e.message);
  }
}

// showNotesHistory lists the notes' earlier versions, newest first.
async function showNotesHistory() {
  const h = await api("GET", agentPath() + "/notes/history?limit=20");
  fill($("notes-history").querySelector("ol"), h.data, (n) => el("li", { text: "Version " + n.version + " (" + n.operation + ", " + when(n.updated_at || n.created_at) + "): " + n.content }));
  $("notes-history").hidden = h.data.length === 0;
}

async function search() {
  const res = await api("POST", userPath() + "/search", { query: $("search-input").value.trim(), scopes: ["memories", "messages", "chunks", "summaries"] });
  fill($("search-results"), res.results, (r) => {
    const parts = Object.entries(r.scores || {}).map(([k, v]) => k + " " + Number(v).toFixed(3));
    const li = el("li", { dataset: { kind: r.kind } }, r.text,
      el("span", { class: "scores", text: r.kind + " · score " + r.score.toFixed(3) + (parts.length ? " (" + parts.join(", ") + ")" : "") }));
    if (r.thread_id) {
      li.append(el("button", { type: "button", class: "link", text: "open the conversation", onclick: () => act(() => openThread(r.thread_id, r.seq_from, r.seq_to)) }));
    }
    return li;
  }, "Nothing found.");
}

export function wireInspector(open) {
  openThread = open;
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act(search);
  });
  $("show-invalid").addEventListener("change", () => act(showMemories));
  $("jobs-refresh").addEventListener("click", () => act(showJobs));
  $("notes-save").addEventListener("click", () => act(async () => {
    const n = await api("PUT", agentPath() + "/notes", { content: $("notes").value, expected_version: Number($("notes").dataset.version || 0) });
    $("notes").dataset.version = n.version;
    $("notes-version").textContent = "version " + n.version + ", saved";
    await showNotesHistory();
  }));
}
