// The chat: messages, a reply streamed through the OpenAI-compatible
// proxy (/openai/v1), and beside it what its context drew on.
import { $, state, api, request, el, notice, plural, threadPath, addMessage, askForKey } from "./api.js";
import { loadThreads, showToolbar, remember } from "./threads.js";
import { inspect } from "./inspector.js";

// send stores the user's turn and streams the model's answer through the
// proxy; without a model it says so, and the turn is recorded all the same.
export async function send(text) {
  if (state.busy) return;
  state.busy = true;
  $("send").disabled = true;
  notice("");
  addMessage("user", text);
  const answer = addMessage("assistant", "…");
  answer.parentElement.setAttribute("aria-busy", "true");
  try {
    const res = await request("POST", "/openai/v1/chat/completions",
      { model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: text }] }, { "X-Agentmem-Memory": "full" });
    const thread = res.headers.get("X-Agentmem-Thread");
    if (thread && thread !== state.thread) {
      state.thread = thread;
      remember();
    }
    if (!res.ok) {
      const data = await res.json().catch(() => null);
      const code = data && data.error && data.error.code;
      answer.parentElement.remove();
      if (res.status === 401) askForKey();
      else notice(code === "no_upstream"
        ? "No model is configured, so nothing answers; your message is recorded, and the inspector shows the context a model would get. Start serve with --proxy-upstream and OPENAI_API_KEY to chat."
        : "The model failed: " + ((data && data.error && data.error.message) || res.status));
    } else {
      answer.textContent = "";
      await stream(res, (delta) => { answer.textContent += delta; });
      await cite(answer.parentElement, text);
      answer.parentElement.dataset.done = "true";
    }
  } catch (e) {
    notice("The request failed: " + e.message);
  } finally {
    answer.parentElement.removeAttribute("aria-busy");
    state.busy = false;
    $("send").disabled = false;
  }
  await loadThreads();
  showToolbar();
  await inspect();
}

// stream reads a chat completion's server-sent events and hands on each
// piece of the answer's text.
async function stream(res, onText) {
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
        if (delta && delta.content) onText(delta.content);
      } catch (_) { /* a line that is not JSON: skip */ }
    }
  }
}

// cite shows beside an answer what its context drew on: the memories
// relevant to the question (the telemetry of the thread's context for the
// question, built as the proxy built it) and how many turns it held.
async function cite(li, question) {
  let c;
  try {
    c = await api("POST", threadPath() + "/context", { query: question });
  } catch (_) {
    return; // citations are a help, not the answer
  }
  const t = c.telemetry;
  const memories = t.memories || [];
  let turns = plural(t.included_messages, "turn");
  if (t.omitted_messages > 0) turns += " (" + t.omitted_messages + " earlier " + (t.summary_through_seq > 0 ? "summarised" : "left out") + ")";
  li.append(el("details", { class: "citations" },
    el("summary", { text: "Drawn on " + plural(memories.length, "memory", "memories") + " and " + turns }),
    el("ul", {}, ...memories.map((text) => el("li", { text })))));
}

export function wireChat() {
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
}
