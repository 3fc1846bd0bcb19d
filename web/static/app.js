// agentmem's web UI: the chat, the conversations, and what the model is
// sent. Same-origin requests with JSON bodies, to the REST API (/v1) and
// the OpenAI-compatible proxy (/openai/v1).
"use strict";

const $ = (id) => document.getElementById(id);
const state = { user: "", thread: "", busy: false };

function headers(extra) {
  const h = { "Content-Type": "application/json", "X-Agentmem-User": state.user };
  const key = $("apikey").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  if (state.thread) h["X-Agentmem-Thread"] = state.thread;
  return Object.assign(h, extra || {});
}

function userPath() {
  return "/v1/users/" + encodeURIComponent(state.user);
}

async function api(method, path, body) {
  const res = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) {
    const err = new Error((data && data.error && data.error.message) || res.status + " " + res.statusText);
    err.status = res.status;
    err.code = data && data.error && data.error.code;
    throw err;
  }
  return data;
}

function notice(text) {
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

function addMessage(role, text) {
  const li = document.createElement("li");
  li.className = "msg " + role;
  const who = document.createElement("span");
  who.className = "role";
  who.textContent = role;
  const body = document.createElement("span");
  body.className = "text";
  body.textContent = text;
  li.append(who, body);
  $("messages").append(li);
  li.scrollIntoView({ block: "end" });
  return body;
}

async function loadThreads() {
  const list = $("threads");
  list.replaceChildren();
  let data;
  try {
    data = await api("GET", userPath() + "/threads?limit=50");
  } catch (e) {
    notice("Could not list the conversations: " + e.message);
    return;
  }
  $("threads-empty").hidden = data.data.length > 0;
  for (const t of data.data) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = t.title || "Untitled";
    b.title = t.title || t.id;
    b.dataset.thread = t.id;
    b.setAttribute("aria-current", String(t.id === state.thread));
    b.addEventListener("click", () => openThread(t.id));
    li.append(b);
    list.append(li);
  }
}

async function openThread(id) {
  state.thread = id;
  remember();
  $("messages").replaceChildren();
  notice("");
  if (id) {
    try {
      const data = await api("GET", userPath() + "/threads/" + encodeURIComponent(id) + "/messages?limit=200");
      for (const m of data.data) {
        if (m.role === "user" || m.role === "assistant") addMessage(m.role, m.content);
      }
    } catch (e) {
      notice(e.status === 404 ? "That conversation no longer exists." : e.message);
    }
  }
  document.querySelectorAll("#threads button").forEach((b) => b.setAttribute("aria-current", String(b.dataset.thread === id)));
  showToolbar();
  await inspect();
}

// showToolbar shows the current thread's title and actions.
function showToolbar() {
  const b = document.querySelector('#threads button[aria-current="true"]');
  $("toolbar").hidden = !b;
  $("rename-form").hidden = true;
  $("title").textContent = b ? b.textContent : "";
  resetDelete();
}

function threadPath() {
  return userPath() + "/threads/" + encodeURIComponent(state.thread);
}

function resetDelete() {
  $("delete").textContent = "Delete";
  $("delete").classList.remove("danger");
  delete $("delete").dataset.armed;
}

async function act(fn) {
  try {
    await fn();
  } catch (e) {
    notice(e.message);
  }
}

// inspect shows the context a model would get now, and the memories.
async function inspect() {
  const tbody = $("sections").querySelector("tbody");
  tbody.replaceChildren();
  $("warnings").replaceChildren();
  if (state.thread) {
    try {
      const c = await api("POST", userPath() + "/threads/" + encodeURIComponent(state.thread) + "/context", {});
      const t = c.telemetry;
      $("used").textContent = t.used_tokens;
      $("budget").textContent = t.budget_tokens;
      $("gauge").value = t.fraction;
      for (const [name, n] of Object.entries(t.sections).sort((a, b) => b[1] - a[1])) {
        const tr = document.createElement("tr");
        const a = document.createElement("td");
        a.textContent = name;
        const b = document.createElement("td");
        b.textContent = n;
        tr.append(a, b);
        tbody.append(tr);
      }
      const lag = [];
      if (t.index_lag > 0) lag.push("indexing is " + t.index_lag + " messages behind");
      if (t.summary_lag > 0 && t.summary_behind) lag.push("the summary is " + t.summary_lag + " messages behind");
      $("lag").textContent = lag.length ? "Background work: " + lag.join("; ") + "." : "";
      for (const w of t.warnings) {
        const li = document.createElement("li");
        li.textContent = w;
        $("warnings").append(li);
      }
    } catch (e) {
      if (e.status !== 404) notice(e.message);
    }
  } else {
    $("used").textContent = "0";
    $("budget").textContent = "0";
    $("gauge").value = 0;
  }
  const list = $("memories");
  list.replaceChildren();
  try {
    const m = await api("GET", userPath() + "/memories?limit=50");
    $("memories-empty").hidden = m.data.length > 0;
    for (const mem of m.data) {
      const li = document.createElement("li");
      li.dataset.memory = mem.id;
      const text = document.createElement("span");
      text.className = "text";
      text.textContent = mem.text;
      const del = document.createElement("button");
      del.type = "button";
      del.className = "forget";
      del.textContent = "Delete";
      del.setAttribute("aria-label", "Delete the memory: " + mem.text);
      del.addEventListener("click", () => act(async () => {
        if (!del.dataset.armed) {
          del.dataset.armed = "true";
          del.textContent = "Really delete?";
          del.classList.add("danger");
          return;
        }
        await api("DELETE", userPath() + "/memories/" + encodeURIComponent(mem.id));
        li.remove();
        $("memories-empty").hidden = list.children.length > 0;
      }));
      const edit = document.createElement("button");
      edit.type = "button";
      edit.className = "edit";
      edit.textContent = "Edit";
      edit.setAttribute("aria-label", "Edit the memory: " + mem.text);
      edit.addEventListener("click", () => {
        const form = document.createElement("form");
        form.className = "toolbar";
        const input = document.createElement("input");
        input.value = mem.text;
        input.setAttribute("aria-label", "The memory's text");
        input.required = true;
        const save = document.createElement("button");
        save.type = "submit";
        save.textContent = "Save";
        form.append(input, save);
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
      });
      const hist = document.createElement("details");
      hist.className = "history";
      const hs = document.createElement("summary");
      hs.textContent = "History";
      hist.append(hs);
      hist.addEventListener("toggle", () => act(async () => {
        if (!hist.open || hist.dataset.loaded) return;
        const h = await api("GET", userPath() + "/memories/" + encodeURIComponent(mem.id) + "/history");
        const ol = document.createElement("ol");
        for (const c of h.data || h) {
          const item = document.createElement("li");
          item.textContent = "v" + c.version + " " + c.op + ": " + c.text + (c.thread_id ? " (from " + c.thread_id + (c.seq_from ? ", messages " + c.seq_from + "–" + c.seq_to : "") + ")" : "") + (c.reason ? " — " + c.reason : "");
          ol.append(item);
        }
        hist.append(ol);
        hist.dataset.loaded = "true";
      }));
      li.append(text, edit, del, hist);
      list.append(li);
    }
  } catch (e) {
    notice(e.message);
  }
  await showProfile();
  await showEntities();
  try {
    const n = await api("GET", userPath() + "/agents/default/notes");
    $("notes").value = n.content;
    $("notes").dataset.version = n.version;
    $("notes-version").textContent = "version " + n.version;
    await showNotesHistory();
  } catch (e) {
    notice(e.message);
  }
}

// showNotesHistory lists the notes' earlier versions, newest first.
async function showNotesHistory() {
  const ol = $("notes-history").querySelector("ol");
  ol.replaceChildren();
  const h = await api("GET", userPath() + "/agents/default/notes/history?limit=20");
  for (const n of h.data) {
    const li = document.createElement("li");
    li.textContent = "Version " + n.version + " (" + n.operation + "): " + n.content;
    ol.append(li);
  }
  $("notes-history").hidden = h.data.length === 0;
}

// send stores the user's turn and streams the model's answer through the
// proxy; without a model it says so, and the turn is recorded all the same.
async function send(text) {
  if (state.busy) return;
  state.busy = true;
  notice("");
  addMessage("user", text);
  const answer = addMessage("assistant", "…");
  try {
    const res = await fetch("/openai/v1/chat/completions", {
      method: "POST",
      headers: headers({ "X-Agentmem-Memory": "full" }),
      body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: text }] }),
    });
    const thread = res.headers.get("X-Agentmem-Thread");
    if (thread && thread !== state.thread) {
      state.thread = thread;
      remember();
    }
    if (!res.ok) {
      const data = await res.json().catch(() => null);
      const code = data && data.error && data.error.code;
      answer.parentElement.remove();
      notice(code === "no_upstream"
        ? "No model is configured, so nothing answers; your message is recorded, and the inspector shows the context a model would get. Start serve with --proxy-upstream and OPENAI_API_KEY to chat."
        : "The model failed: " + ((data && data.error && data.error.message) || res.status));
    } else {
      answer.textContent = "";
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (!line.startsWith("data:")) continue;
          const data = line.slice(5).trim();
          if (data === "[DONE]") continue;
          try {
            const chunk = JSON.parse(data);
            const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
            if (delta && delta.content) answer.textContent += delta.content;
          } catch (_) { /* a line that is not JSON: skip */ }
        }
      }
      await cite(answer.parentElement, text);
      answer.parentElement.dataset.done = "true";
    }
  } catch (e) {
    notice("The request failed: " + e.message);
  } finally {
    state.busy = false;
  }
  await loadThreads();
  showToolbar();
  await inspect();
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
      if (v.version === p.version) continue;
      const li = document.createElement("li");
      li.textContent = "Version " + v.version + " (" + new Date(v.created_at).toLocaleString() + "):\n" + v.text;
      versions.append(li);
    }
    $("profile-versions").hidden = versions.children.length === 0;
  } catch (e) {
    $("profile-version").textContent = "";
    $("profile").textContent = e.status === 404 ? "No profile yet: it is written when a conversation has ended and been reflected on." : e.message;
  }
}

// showEntities lists the named things the user talks about.
async function showEntities() {
  const list = $("entities");
  list.replaceChildren();
  try {
    const res = await api("GET", userPath() + "/entities?limit=50");
    for (const e of res.data) {
      const li = document.createElement("li");
      li.textContent = e.name;
      if (e.type) {
        const type = document.createElement("span");
        type.className = "muted";
        type.textContent = e.type;
        li.append(type);
      }
      list.append(li);
    }
    $("entities-empty").hidden = res.data.length > 0;
  } catch (e) {
    notice(e.message);
  }
}

// showOperator shows the operator's view when the caller is an admin
// (the local admin with --auth none): the store's counts, failed jobs,
// keys and the audit log. Other callers never see it (their requests are
// refused, 403).
async function showOperator() {
  let stats;
  try {
    stats = await api("GET", "/v1/stats");
  } catch (_) {
    $("operator").hidden = true;
    return;
  }
  $("operator").hidden = false;
  $("stats").textContent = stats.users + " users, " + stats.threads + " conversations, " + stats.messages + " messages, " + (stats.store_bytes / 1048576).toFixed(1) + " MiB";
  const fill = (id, items, line, empty) => {
    const list = $(id);
    list.replaceChildren();
    for (const it of items) {
      const li = document.createElement("li");
      li.textContent = line(it);
      list.append(li);
    }
    if (items.length === 0) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = empty;
      list.append(li);
    }
  };
  try {
    const [dead, keys, audit] = await Promise.all([api("GET", "/v1/jobs?status=dead&limit=20"), api("GET", "/v1/keys?limit=20"), api("GET", "/v1/audit?limit=20")]);
    fill("dead-jobs", dead.data, (j) => j.kind + " of " + j.user_id + ": " + (j.last_error || "failed"), "None.");
    const scope = (sc) => [sc.kind, sc.tenant_id, sc.user_id].filter(Boolean).join(" ");
    fill("keys", keys.data, (k) => (k.name || k.id) + " (" + scope(k.scope) + (k.revoked_at ? ", revoked" : "") + ")", "None yet.");
    fill("audit", audit.data, (e) => new Date(e.at).toLocaleString() + " " + e.actor + " " + e.action + (e.user_id ? " " + e.user_id : ""), "Nothing yet.");
  } catch (e) {
    notice(e.message);
  }
}

// cite shows beside an answer what its context drew on: the memories
// relevant to the question (built as the proxy built them: the thread's
// context for the question) and how many turns it held.
async function cite(li, question) {
  let c;
  try {
    c = await api("POST", threadPath() + "/context", { query: question, format: "messages" });
  } catch (_) {
    return; // citations are a help, not the answer
  }
  const memories = [];
  for (const m of c.messages) {
    if (m.role !== "system") continue;
    const i = m.content.indexOf("### Relevant Memories\n");
    if (i < 0) continue;
    for (const line of m.content.slice(i).split("\n").slice(1)) {
      if (!line.startsWith("- ")) break;
      memories.push(line.slice(2));
    }
  }
  const details = document.createElement("details");
  details.className = "citations";
  const summary = document.createElement("summary");
  const turns = c.telemetry.included_messages;
  summary.textContent = "Drawn on " + memories.length + (memories.length === 1 ? " memory" : " memories") + " and " + turns + (turns === 1 ? " turn" : " turns");
  const list = document.createElement("ul");
  for (const text of memories) {
    const item = document.createElement("li");
    item.textContent = text;
    list.append(item);
  }
  details.append(summary, list);
  li.append(details);
}

function remember() {
  localStorage.setItem("agentmem.user", state.user);
  localStorage.setItem("agentmem.thread", state.thread);
  const url = new URL(location.href);
  url.searchParams.set("user", state.user);
  if (state.thread) url.searchParams.set("thread", state.thread);
  else url.searchParams.delete("thread");
  history.replaceState(null, "", url);
}

async function start() {
  const params = new URLSearchParams(location.search);
  state.user = params.get("user") || localStorage.getItem("agentmem.user") || "local-user";
  state.thread = params.get("thread") || (params.get("user") ? "" : localStorage.getItem("agentmem.thread") || "");
  $("user").value = state.user;
  $("apikey").value = sessionStorage.getItem("agentmem.key") || "";
  $("user").addEventListener("change", async () => {
    state.user = $("user").value.trim() || "local-user";
    state.thread = "";
    await loadThreads();
    await openThread("");
  });
  $("apikey").addEventListener("change", async () => {
    sessionStorage.setItem("agentmem.key", $("apikey").value.trim());
    await loadThreads();
    await openThread(state.thread);
  });
  $("new").addEventListener("click", async () => {
    // A new thread, named here: the proxy creates it with the first message.
    state.thread = crypto.randomUUID();
    remember();
    $("messages").replaceChildren();
    notice("");
    document.querySelectorAll("#threads button").forEach((b) => b.setAttribute("aria-current", "false"));
    await inspect();
    $("input").focus();
  });
  $("rename").addEventListener("click", () => {
    $("rename-form").hidden = false;
    $("rename-input").value = $("title").textContent;
    $("rename-input").focus();
  });
  $("rename-cancel").addEventListener("click", () => { $("rename-form").hidden = true; });
  $("rename-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act(async () => {
      await api("PATCH", threadPath(), { title: $("rename-input").value.trim() });
      await loadThreads();
      showToolbar();
    });
  });
  $("end").addEventListener("click", () => act(async () => {
    await api("POST", threadPath() + "/end");
    notice("The conversation has ended: it is summarised and reflected on. A new message reopens it.");
  }));
  $("delete").addEventListener("click", () => act(async () => {
    if (!$("delete").dataset.armed) {
      $("delete").dataset.armed = "true";
      $("delete").textContent = "Really delete?";
      $("delete").classList.add("danger");
      return;
    }
    const gone = state.thread;
    await api("DELETE", threadPath());
    state.deleted = gone;
    $("undo").hidden = false;
    await loadThreads();
    await openThread("");
  }));
  $("restore").addEventListener("click", () => act(async () => {
    state.thread = state.deleted;
    await api("POST", threadPath() + "/restore");
    $("undo").hidden = true;
    await loadThreads();
    await openThread(state.deleted);
  }));
  for (const [id, format, type] of [["export-md", "markdown", "text/markdown"], ["export-json", "json", "application/json"]]) {
    $(id).addEventListener("click", () => act(async () => {
      const res = await fetch(threadPath() + "/export?format=" + format, { headers: headers() });
      const text = await res.text();
      if (!res.ok) throw new Error("The export failed: " + res.status);
      $("export-text").textContent = text;
      const link = $("export-download");
      URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(new Blob([text], { type }));
      link.download = (state.thread || "thread") + (format === "json" ? ".json" : ".md");
      $("export").hidden = false;
    }));
  }
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act(async () => {
      const res = await api("POST", userPath() + "/search", { query: $("search-input").value.trim(), scopes: ["memories", "messages", "chunks", "summaries"] });
      const list = $("search-results");
      list.replaceChildren();
      if (res.results.length === 0) {
        const li = document.createElement("li");
        li.textContent = "Nothing found.";
        list.append(li);
      }
      for (const r of res.results) {
        const li = document.createElement("li");
        li.dataset.kind = r.kind;
        li.textContent = r.text;
        const scores = document.createElement("span");
        scores.className = "scores";
        const parts = Object.entries(r.scores || {}).map(([k, v]) => k + " " + Number(v).toFixed(3));
        scores.textContent = r.kind + " · score " + r.score.toFixed(3) + (parts.length ? " (" + parts.join(", ") + ")" : "");
        li.append(scores);
        list.append(li);
      }
    });
  });
  $("export-close").addEventListener("click", () => { $("export").hidden = true; });
  $("notes-save").addEventListener("click", () => act(async () => {
    const n = await api("PUT", userPath() + "/agents/default/notes", { content: $("notes").value, expected_version: Number($("notes").dataset.version || 0) });
    $("notes").dataset.version = n.version;
    $("notes-version").textContent = "version " + n.version + ", saved";
    await showNotesHistory();
  }));
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("input").value.trim();
    if (!text) return;
    $("input").value = "";
    send(text);
  });
  $("input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  await loadThreads();
  await openThread(state.thread);
  await showOperator();
  // The composer opens once the page has loaded the conversation, so that
  // nothing typed before is cleared by the load.
  $("input").disabled = false;
  $("send").disabled = false;
  document.body.dataset.ready = "true";
}

start();
