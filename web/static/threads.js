// The conversations: the sidebar (newest first, searched by title, paged,
// the recently deleted), opening one, and the toolbar's actions on it.
import { $, state, api, request, act, el, confirmed, notice, fill, short, plural, userPath, threadPath, addMessage } from "./api.js";
import { inspect } from "./inspector.js";

let next = "";

// loadThreads lists the user's conversations from the start, or the next
// page when more is true.
export async function loadThreads(more) {
  const list = $("threads");
  if (!more) {
    next = "";
    list.replaceChildren();
  }
  const q = $("thread-search").value.trim();
  const params = new URLSearchParams({ limit: "30" });
  if (q) params.set("q", q);
  if (more && next) params.set("cursor", next);
  let data;
  try {
    data = await api("GET", userPath() + "/threads?" + params);
  } catch (e) {
    notice("Could not list the conversations: " + e.message);
    $("more").hidden = true;
    return;
  }
  next = data.next_cursor || "";
  for (const t of data.data) list.append(threadItem(t));
  $("more").hidden = !next;
  $("threads-empty").textContent = q ? "No conversation's title contains “" + q + "”." : "No conversations yet: write a message to begin one.";
  $("threads-empty").hidden = list.children.length > 0;
  markCurrent();
}

function threadItem(t) {
  const detail = [short(t.updated_at), plural(t.message_count, "message")];
  if (t.status === "ended") detail.push("ended");
  if (t.agent_id && t.agent_id !== "default") detail.push("agent " + t.agent_id);
  return el("li", {},
    el("button", { type: "button", title: t.title || t.id, dataset: { thread: t.id, title: t.title || "Untitled" }, onclick: () => openThread(t.id) },
      el("span", { class: "name", text: t.title || "Untitled" }),
      el("span", { class: "muted", text: detail.join(" · ") })));
}

function markCurrent() {
  document.querySelectorAll("#threads button").forEach((b) => b.setAttribute("aria-current", String(b.dataset.thread === state.thread)));
}

// loadDeleted lists the conversations deleted lately, each restorable.
async function loadDeleted() {
  const data = await api("GET", userPath() + "/threads?deleted=true&limit=20");
  fill($("deleted-threads"), data.data, (t) => el("li", {},
    el("span", { text: (t.title || "Untitled") + " " }),
    el("button", { type: "button", class: "small", "aria-label": "Restore " + (t.title || t.id), text: "Restore",
      onclick: () => act(async () => {
        await api("POST", threadPath(t.id) + "/restore");
        $("thread-search").value = "";
        await loadThreads();
        await loadDeleted();
        await openThread(t.id);
      }) })), "None.");
}

// openThread shows a conversation ("" for none: a new one) and inspects
// it; from and to, when given, mark the messages of those seqs (where a
// memory came from) and scroll to them.
export async function openThread(id, from, to) {
  // Until the thread and the inspector are shown, the page says so: a
  // click meanwhile may land on a list about to be redrawn.
  document.body.dataset.opening = "true";
  try {
    await showThread(id, from, to);
  } finally {
    delete document.body.dataset.opening;
  }
}

async function showThread(id, from, to) {
  state.thread = id;
  remember();
  $("messages").replaceChildren();
  $("export").hidden = true;
  notice("");
  if (id) {
    try {
      const data = await api("GET", threadPath() + "/messages?limit=200&order=desc");
      for (const m of data.data.reverse()) {
        if (m.role === "user" || m.role === "assistant") addMessage(m.role, m.content, m.seq);
      }
      if (data.next_cursor) $("messages").prepend(el("li", { class: "empty", text: "Earlier messages are in the export." }));
      if (from) {
        const marked = [...document.querySelectorAll("#messages li.msg[data-seq]")].filter((li) => Number(li.dataset.seq) >= from && Number(li.dataset.seq) <= (to || from));
        marked.forEach((li) => li.classList.add("marked"));
        if (marked.length) marked[0].scrollIntoView({ block: "center" });
      }
    } catch (e) {
      notice(e.status === 404 ? "That conversation no longer exists." : e.message);
    }
  }
  markCurrent();
  showToolbar();
  // The toolbar above the list takes its height from the list: the
  // newest message is scrolled back into view (a marked one stays).
  if (!from) $("messages").scrollTop = $("messages").scrollHeight;
  await inspect();
}

// showToolbar shows the current thread's title and actions.
export function showToolbar() {
  const b = document.querySelector('#threads button[aria-current="true"]');
  $("toolbar").hidden = !b;
  $("rename-form").hidden = true;
  $("title").textContent = b ? b.dataset.title : "";
}

// remember keeps the user and thread in the URL and for the next visit.
export function remember() {
  localStorage.setItem("agentmem.user", state.user);
  localStorage.setItem("agentmem.agent", state.agent);
  localStorage.setItem("agentmem.thread", state.thread);
  const url = new URL(location.href);
  url.searchParams.set("user", state.user);
  if (state.thread) url.searchParams.set("thread", state.thread);
  else url.searchParams.delete("thread");
  history.replaceState(null, "", url);
}

// newThread begins a conversation, named here: the proxy creates it with
// the first message.
export async function newThread() {
  state.thread = crypto.randomUUID();
  remember();
  $("messages").replaceChildren();
  notice("");
  markCurrent();
  showToolbar();
  await inspect();
  $("input").focus();
}

export function wireThreads() {
  $("new").addEventListener("click", () => act(newThread));
  $("more").addEventListener("click", () => act(() => loadThreads(true)));
  let typing = 0;
  $("thread-search").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => act(() => loadThreads()), 250);
  });
  $("deleted").addEventListener("toggle", () => {
    if ($("deleted").open) act(loadDeleted);
  });
  $("rename").addEventListener("click", () => {
    $("rename-form").hidden = false;
    $("rename-input").value = $("title").textContent;
    $("rename-input").focus();
  });
  $("rename-cancel").addEventListener("click", () => { $("rename-form").hidden = true; $("rename").focus(); });
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
    await loadThreads();
    await inspect();
  }));
  confirmed($("delete"), "Really delete?", async () => {
    const gone = state.thread;
    await api("DELETE", threadPath());
    state.deleted = gone;
    $("undo").hidden = false;
    await loadThreads();
    await openThread("");
    if ($("deleted").open) await loadDeleted();
  });
  $("restore").addEventListener("click", () => act(async () => {
    await api("POST", threadPath(state.deleted) + "/restore");
    $("undo").hidden = true;
    await loadThreads();
    await openThread(state.deleted);
  }));
  for (const [id, format, type] of [["export-md", "markdown", "text/markdown"], ["export-json", "json", "application/json"]]) {
    $(id).addEventListener("click", () => act(async () => {
      const res = await request("GET", threadPath() + "/export?format=" + format);
      const text = await res.text();
      if (!res.ok) throw new Error("The export failed: " + res.status);
      $("export-text").textContent = text;
      const link = $("export-download");
      URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(new Blob([text], { type }));
      link.download = (state.thread || "thread") + (format === "json" ? ".json" : ".md");
      link.textContent = "Download " + link.download;
      $("export").hidden = false;
      link.focus();
    }));
  }
  $("export-close").addEventListener("click", () => { $("export").hidden = true; });
}
