// agentmem's web UI: the chat, the conversations, and what the model is
// sent. This module starts the page; api.js holds the shared parts,
// chat.js the chat, threads.js the conversations, inspector.js what is
// remembered and sent, operator.js the operator's view.
import { $, state, api, act, notice, keyAccepted } from "./api.js";
import { wireChat } from "./chat.js";
import { loadThreads, openThread, remember, wireThreads } from "./threads.js";
import { inspect, wireInspector } from "./inspector.js";
import { showOperator, wireOperator } from "./operator.js";

// whoami learns the caller from the server: a user's key fixes the user.
// It returns false when the server wants a key the page lacks (401):
// api() has pointed at the key box, and nothing else can be read.
async function whoami() {
  try {
    state.me = await api("GET", "/v1/me");
  } catch (e) {
    state.me = null;
    if (e.status === 401) return false;
    notice("Who you are could not be read: " + e.message);
    return true;
  }
  keyAccepted();
  const fixed = state.me.kind === "user" && state.me.user_id;
  if (fixed && state.user !== state.me.user_id) {
    state.user = state.me.user_id;
    state.thread = "";
  }
  $("user").value = state.user;
  $("user").readOnly = Boolean(fixed);
  $("user").title = fixed ? "Your key is the key of this user." : "";
  $("me").textContent = state.me.kind === "admin" ? (state.me.via === "none" ? "local admin" : "admin") : state.me.kind + (state.me.tenant_id ? " of " + state.me.tenant_id : "");
  return true;
}

async function reload() {
  if (!(await whoami())) return;
  remember();
  await loadThreads();
  await openThread(state.thread);
  await showOperator();
}

async function start() {
  const params = new URLSearchParams(location.search);
  state.user = params.get("user") || localStorage.getItem("agentmem.user") || "local-user";
  state.agent = localStorage.getItem("agentmem.agent") || "default";
  state.thread = params.get("thread") || (params.get("user") ? "" : localStorage.getItem("agentmem.thread") || "");
  $("user").value = state.user;
  $("agent").value = state.agent;
  $("apikey").value = sessionStorage.getItem("agentmem.key") || "";
  $("user").addEventListener("change", () => act(async () => {
    state.user = $("user").value.trim() || "local-user";
    state.thread = "";
    remember();
    await loadThreads();
    await openThread("");
  }));
  $("agent").addEventListener("change", () => act(async () => {
    state.agent = $("agent").value.trim() || "default";
    remember();
    await inspect();
  }));
  $("apikey").addEventListener("change", () => act(async () => {
    sessionStorage.setItem("agentmem.key", $("apikey").value.trim());
    notice("");
    await reload();
  }));
  wireChat();
  wireThreads();
  wireInspector(openThread);
  wireOperator();
  await reload();
  // The composer opens once the page has loaded the conversation, so that
  // nothing typed before is cleared by the load.
  $("input").disabled = false;
  $("send").disabled = false;
  document.body.dataset.ready = "true";
}

start();
