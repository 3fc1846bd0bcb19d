// The operator's view, for an admin identity: the store's counts, users,
// failed jobs (retried here), keys, the audit log, and a small dashboard
// of the Prometheus figures at /metrics.
import { $, state, api, request, act, el, fill, when, plural } from "./api.js";

// showOperator shows the operator's view when the caller is an admin (the
// local admin with --auth none); other callers never see it.
export async function showOperator() {
  if (!state.me || state.me.kind !== "admin") {
    $("operator").hidden = true;
    return;
  }
  let stats;
  try {
    stats = await api("GET", "/v1/stats");
  } catch (_) {
    $("operator").hidden = true;
    return;
  }
  $("operator").hidden = false;
  $("stats").textContent = plural(stats.users, "user") + ", " + plural(stats.threads, "conversation") + ", " + plural(stats.messages, "message") + ", " + (stats.store_bytes / 1048576).toFixed(1) + " MiB";
  await Promise.all([showUsers(), showDeadJobs(), showKeys(), showAudit(), showDashboard()].map((p) => p.catch((e) => $("operator-error").replaceChildren(e.message))));
}

async function showUsers() {
  const users = await api("GET", "/v1/users?limit=50");
  const tbody = $("users").querySelector("tbody");
  tbody.replaceChildren(...users.data.map((u) => el("tr", {},
    el("td", {}, el("a", { href: "?user=" + encodeURIComponent(u.user_id), text: u.user_id })),
    el("td", { text: String(u.threads) }), el("td", { text: String(u.messages) }), el("td", { text: String(u.memories) }))));
  $("users-empty").hidden = users.data.length > 0;
}

async function showDeadJobs() {
  const dead = await api("GET", "/v1/jobs?status=dead&limit=20");
  fill($("dead-jobs"), dead.data, (j) => el("li", { dataset: { job: j.id } },
    j.kind + " of " + j.user_id + ": " + (j.last_error || "failed") + " ",
    el("button", { type: "button", class: "small retry", text: "Retry", "aria-label": "Retry the " + j.kind + " job of " + j.user_id,
      onclick: () => act(async () => {
        await api("POST", "/v1/users/" + encodeURIComponent(j.user_id) + "/jobs/" + encodeURIComponent(j.id) + "/retry");
        await showDeadJobs();
      }) })), "None.");
}

async function showKeys() {
  const keys = await api("GET", "/v1/keys?limit=20");
  const scope = (sc) => [sc.kind, sc.tenant_id, sc.user_id].filter(Boolean).join(" ");
  fill($("keys"), keys.data, (k) => el("li", { text: (k.name || k.id) + " (" + scope(k.scope) + (k.revoked_at ? ", revoked" : "") + ")" }), "None yet.");
}

async function showAudit() {
  const audit = await api("GET", "/v1/audit?limit=20");
  fill($("audit"), audit.data, (e) => el("li", { text: when(e.at) + " " + e.actor + " " + e.action + (e.user_id ? " " + e.user_id : "") }), "Nothing yet.");
}

// parseMetrics reads Prometheus' text format into samples.
export function parseMetrics(text) {
  const samples = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

function sum(samples, name, where) {
  return samples.filter((s) => s.name === name && (!where || where(s.labels))).reduce((a, s) => a + s.value, 0);
}

// quantile estimates the q-quantile of a histogram from its cumulative
// buckets (summed over every series), as Prometheus' histogram_quantile.
export function quantile(q, buckets) {
  const bs = [...buckets.entries()].map(([le, n]) => [le === "+Inf" ? Infinity : Number(le), n]).sort((a, b) => a[0] - b[0]);
  if (bs.length === 0) return NaN;
  const total = bs[bs.length - 1][1];
  if (total === 0) return NaN;
  const rank = q * total;
  let prevLe = 0, prevN = 0;
  for (const [le, n] of bs) {
    if (n >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + (le - prevLe) * ((rank - prevN) / Math.max(n - prevN, 1e-9));
    }
    prevLe = le;
    prevN = n;
  }
  return prevLe;
}

function buckets(samples, name, minus) {
  const b = new Map();
  for (const s of samples) if (s.name === name) b.set(s.labels.le, (b.get(s.labels.le) || 0) + s.value);
  if (minus) for (const [le, n] of minus) b.set(le, (b.get(le) || 0) - n);
  return b;
}

let last = null; // the previous scrape: {at, requests, buckets}
const rates = [];
let polling = 0;

// showDashboard scrapes /metrics: request rate (since the previous
// scrape), p99 latency, jobs waiting, errors and the tokens the proxy
// saved; it scrapes again every 5 s while the operator's view is open.
async function showDashboard() {
  const res = await request("GET", "/metrics");
  if (!res.ok) {
    $("dashboard").replaceChildren(el("p", { class: "empty", text: res.status === 404 ? "No metrics on this server." : "The metrics cannot be read: " + res.status }));
    return;
  }
  const samples = parseMetrics(await res.text());
  const at = Date.now();
  const requests = sum(samples, "agentmem_http_requests_total");
  const errors = sum(samples, "agentmem_http_requests_total", (l) => l.code && l.code.startsWith("5"));
  const all = buckets(samples, "agentmem_http_request_duration_seconds_bucket");
  let rate = "", p99;
  if (last) {
    const r = (requests - last.requests) / ((at - last.at) / 1000);
    rate = r.toFixed(1) + "/s";
    rates.push(r);
    if (rates.length > 24) rates.shift();
    p99 = quantile(0.99, buckets(samples, "agentmem_http_request_duration_seconds_bucket", last.buckets));
  }
  if (p99 === undefined || Number.isNaN(p99)) p99 = quantile(0.99, all);
  last = { at, requests, buckets: all };
  const saved = sum(samples, "agentmem_proxy_context_tokens_total", (l) => l.kind === "history") - sum(samples, "agentmem_proxy_context_tokens_total", (l) => l.kind === "sent");
  const figures = [
    ["Requests", requests + (rate ? " (" + rate + ")" : "")],
    ["p99 latency", Number.isNaN(p99) ? "–" : (p99 * 1000).toFixed(1) + " ms"],
    ["Server errors", String(errors)],
    ["Jobs waiting", String(sum(samples, "agentmem_jobs_backlog"))],
    ["Tokens saved by the proxy", String(Math.max(0, saved))],
  ];
  const spark = el("span", { class: "spark", role: "img", "aria-label": "Requests per second, last two minutes", hidden: rates.length < 2 });
  const top = Math.max(1, ...rates);
  for (const r of rates) {
    const b = el("span");
    b.style.height = Math.max(2, (r / top) * 100) + "%";
    spark.append(b);
  }
  $("dashboard").replaceChildren(el("dl", {}, ...figures.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v, dataset: { figure: k } })])), spark);
  if (!polling) {
    polling = setInterval(() => {
      if ($("operator").open && !document.hidden) act(showDashboard);
    }, 5000);
  }
}

export function wireOperator() {
  $("operator").addEventListener("toggle", () => {
    if ($("operator").open) act(showOperator);
  });
}
