// Local Memory status monitor: a read-only page over the monitor's JSON API (no build step, no CDN).
"use strict";

const state = { token: sessionStorage.getItem("lm-token") || "", project: "", poll: null, graph: null };
const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) node.append(kid.nodeType ? kid : String(kid));
  return node;
};

async function api(path, params = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== undefined && v !== null && v !== false) url.searchParams.set(k, v);
  const headers = state.token ? { Authorization: "Bearer " + state.token } : {};
  const resp = await fetch(url, { headers });
  if (resp.status === 401) { showAuth("The token was refused."); throw new Error("unauthorized"); }
  return resp.json();
}

function showAuth(message) {
  $("#auth").classList.remove("hidden"); document.querySelector("main").classList.add("hidden");
  $("#auth-error").textContent = state.token ? message : "";
}

function badge(text) { return el("span", { class: "badge " + String(text || "").toLowerCase() }, text || "?"); }
function warnings(box, list) {
  box.replaceChildren(...(list || []).map((w) => el("div", {}, el("b", {}, w.code), " ", w.message)));
}
function errorBox(box, env) {
  const e = env.error || {}; box.replaceChildren(el("div", { class: "error" }, `${e.code || "ERROR"}: ${e.message || ""}`));
}
function progressBar(fraction) {
  return el("span", { class: "progress", title: Math.round(fraction * 100) + "%" },
    el("div", { style: `width:${Math.round(fraction * 100)}%` }));
}

// -- tabs ---------------------------------------------------------------------------------

function showTab(name) {
  document.querySelectorAll("nav button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("hidden", t.id !== "tab-" + name));
  location.hash = name;
  if (name === "overview") loadProjects();
  if (name === "health") loadHealth();
  if (name === "memory" && !$("#memory-results").children.length) loadMemory();
  if (name === "graph" && state.graph) state.graph.resize();
}

// -- overview -----------------------------------------------------------------------------

async function loadProjects() {
  const env = await api("/api/projects");
  const rows = (env.data && env.data.projects) || [];
  const select = $("#project");
  const current = state.project || select.value;
  select.replaceChildren(...rows.map((p) => el("option", { value: p.project_path }, p.project_path)));
  if (rows.length) { select.value = rows.some((p) => p.project_path === current) ? current : rows[0].project_path; state.project = select.value; }
  $("#projects-empty").classList.toggle("hidden", rows.length > 0);
  $("#projects-table tbody").replaceChildren(...rows.map(projectRow));
  const running = rows.some((p) => p.job && p.job.status === "running" && p.job.alive);
  clearTimeout(state.poll);
  state.poll = setTimeout(() => { if (!$("#tab-overview").classList.contains("hidden")) loadProjects(); }, running ? 1500 : 10000);
}

function projectRow(p) {
  const f = p.freshness || {};
  const fresh = f.fresh === undefined ? "" : f.fresh ? badge("fresh") : el("span", {}, badge("stale"), ` ${f.stale_files} file(s)`);
  const job = p.job;
  let indexing = el("span", { class: "muted" }, "idle");
  if (job && job.status === "running" && job.alive) {
    const eta = job.eta_seconds != null ? `, ETA ${Math.round(job.eta_seconds)} s` : "";
    const rate = job.chunks_per_second != null ? `, ${job.chunks_per_second} chunks/s` : "";
    indexing = el("span", { class: "job" }, progressBar(job.progress), ` ${job.phase}: ${job.files_done}/${job.files_total} files, ` +
      `${job.chunks_embedded}/${job.chunks_total} chunks${rate}${eta}`);
  } else if (job) {
    indexing = el("span", {}, badge(job.status), ` ${job.finished_at || job.updated_at}`);
  }
  return el("tr", {}, el("td", { class: "path" }, p.project_path), el("td", {}, badge(p.health)),
    el("td", {}, p.files), el("td", {}, p.chunks), el("td", {}, `${p.model || "?"} (${p.dimension || "?"}d)`),
    el("td", {}, p.last_indexed_at || "never"), el("td", {}, fresh), el("td", {}, indexing));
}

// -- search -------------------------------------------------------------------------------

async function runSearch(ev) {
  ev && ev.preventDefault();
  const q = $("#q").value.trim(); if (!q) return;
  const env = await api("/api/search", { project: state.project, q, mode: $("#mode").value, explain: $("#explain").checked ? "true" : "" });
  const list = $("#search-results");
  warnings($("#search-warnings"), env.warnings);
  if (!env.ok) { errorBox($("#search-warnings"), env); list.replaceChildren(); return; }
  list.replaceChildren(...(env.results || []).map(searchHit));
}

function searchHit(hit) {
  const head = el("div", { class: "hit-head" }, el("span", { class: "path" }, `${hit.file_path}:${hit.start_line}-${hit.end_line}`),
    el("span", { class: "symbol" }, hit.symbol_name || hit.chunk_kind || ""), el("span", { class: "muted" }, `score ${Number(hit.score || 0).toFixed(4)}`));
  const code = el("pre", { class: "code" }, (hit.text || hit.summary || "").split("\n").slice(0, 8).join("\n"));
  return el("li", { "data-file": hit.file_path }, head, hit.explain ? explainBars(hit.explain) : null, code);
}

// One bar per ranking factor: the two legs' RRF contributions, then every multiplier.
function explainBars(x) {
  const rows = [];
  const legs = [["semantic", x.semantic, "sem"], ["keyword", x.keyword, "kw"]];
  const maxContribution = Math.max(1e-9, ...legs.map(([, leg]) => (leg && leg.contribution) || 0));
  for (const [name, leg, cls] of legs) {
    const c = (leg && leg.contribution) || 0;
    const detail = leg && leg.rank ? `rank ${leg.rank}` : "not retrieved";
    rows.push([`${name} (${detail})`, c / maxContribution, c.toFixed(4), cls]);
  }
  for (const [key, value] of Object.entries(x)) {
    const mult = value && typeof value === "object" && typeof value.multiplier === "number" ? value.multiplier : null;
    if (mult !== null) rows.push([key.replace(/_/g, " "), Math.min(mult / 2, 1), "×" + mult.toFixed(2), "mult"]);
  }
  for (const [key, value] of Object.entries(x.factors || {})) {
    if (typeof value === "number") rows.push([key.replace(/_/g, " "), Math.min(Math.abs(value) / 2, 1), "×" + value.toFixed(2), "mult"]);
  }
  rows.push(["final score", 1, Number(x.final_score || 0).toFixed(4), ""]);
  return el("div", { class: "bars", "data-explain": "1" }, ...rows.flatMap(([label, frac, text, cls]) =>
    [el("span", { class: "muted" }, label), el("div", { class: "bar " + cls, style: `width:${Math.max(0, Math.min(frac, 1)) * 100}%` }), el("span", {}, text)]));
}

// -- memory -------------------------------------------------------------------------------

async function loadMemory(ev) {
  ev && ev.preventDefault();
  const q = $("#mq").value.trim();
  const params = { project: state.project, kind: $("#mkind").value, sort: $("#msort").value,
    includeExpired: $("#mexpired").checked ? "true" : "", crossProject: $("#mcross").checked ? "true" : "",
    explain: $("#mexplain").checked ? "true" : "" };
  const env = q ? await api("/api/records/search", { ...params, q }) : await api("/api/records", params);
  warnings($("#memory-warnings"), env.warnings);
  if (env.ok === false) { errorBox($("#memory-warnings"), env); $("#memory-results").replaceChildren(); return; }
  const items = env.hits || env.records || (env.data && (env.data.hits || env.data.records)) || [];
  $("#memory-results").replaceChildren(...items.map(memoryItem));
  if (!items.length) $("#memory-results").append(el("p", { class: "muted" }, "No record matches."));
}

function memoryItem(r) {
  const id = r.id || r.uid;
  const head = el("div", { class: "hit-head" }, badge(r.kind), el("span", { class: "symbol" }, r.title || id),
    el("span", { class: "muted" }, `hits ${r.hits || 0} · seen ${r.occurrences || 1}× · ${r.updated || ""}`));
  const tags = (r.tags || []).length ? el("div", { class: "muted" }, "#" + r.tags.join(" #")) : null;
  const explain = r.explain ? el("pre", { class: "code" }, JSON.stringify(r.explain, null, 1)) : null;
  return el("li", { "data-id": id, onclick: () => openRecord(id) }, head, tags, explain);
}

async function openRecord(id) {
  document.querySelectorAll("#memory-results li").forEach((li) => li.classList.toggle("selected", li.dataset.id === id));
  const env = await api("/api/records/" + encodeURIComponent(id), { project: state.project });
  const box = $("#memory-record");
  if (env.ok === false) { errorBox(box, env); return; }
  const r = env.record || (env.data && env.data.record) || env.data || {};
  const chain = (env.chain || (env.data && env.data.chain) || []);
  const links = (env.links || (env.data && env.data.links) || r.links || []);
  box.replaceChildren(...[el("h3", {}, r.title || id),
    el("div", { class: "meta" }, `${r.kind} · ${r.status || ""} · ${r.project || ""} · updated ${r.updated || ""} · v${r.version || 1}`),
    chain.length ? el("div", { class: "chain" }, "Supersession: ", ...chain.map((c) => el("a", { href: "#memory", onclick: () => openRecord(c.id || c) }, c.title || c.id || c))) : null,
    links.length ? el("div", { class: "chain" }, "Links: ", ...links.map((c) => el("a", { href: "#memory", onclick: () => openRecord(c.id || c.target || c) }, c.title || c.id || c.target || c))) : null,
    el("pre", { class: "code", style: "white-space:pre-wrap" }, r.content || "")].filter(Boolean));
}

// -- graph --------------------------------------------------------------------------------

async function drawGraph(ev) {
  ev && ev.preventDefault();
  const q = $("#gq").value.trim(); if (!q) return;
  const kind = $("#gkind").value;
  const env = kind === "symbol" ? await api("/api/graph/symbol", { project: state.project, symbol: q, depth: $("#gdepth").value })
    : await api("/api/graph/imports", { project: state.project, path: q });
  if (!env.ok) { $("#graph-message").textContent = `${env.error.code}: ${env.error.message}`; return; }
  const d = env.data;
  $("#graph-message").textContent = d.message || `${d.nodes.length} node(s), ${d.edges.length} edge(s)`;
  const elements = d.nodes.map((n) => ({ data: { ...n } })).concat(d.edges.map((e) => ({ data: { ...e } })));
  if (state.graph) state.graph.destroy();
  state.graph = cytoscape({
    container: $("#graph-canvas"), elements, wheelSensitivity: 0.3, maxZoom: 1.6, minZoom: 0.1,
    layout: { name: "breadthfirst", directed: true, padding: 20, spacingFactor: 1.1 },
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "text-valign": "bottom", "background-color": "#2f6fdf", width: 16, height: 16 } },
      { selector: "node[role = 'center']", style: { "background-color": "#c0392b", width: 24, height: 24 } },
      { selector: "node[role = 'caller']", style: { "background-color": "#e07b39" } },
      { selector: "node[role = 'external']", style: { "background-color": "#9aa0a6" } },
      { selector: "edge", style: { width: 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "#b7bcc2", "target-arrow-color": "#b7bcc2" } },
    ],
  });
  window.__graphNodes = d.nodes.map((n) => n.label);
  state.graph.on("tap", "node", (e) => openNode(e.target.data()));
}

async function openNode(n) {
  const box = $("#graph-code");
  if (n.chunk_id) {
    const env = await api("/api/chunk", { project: state.project, id: n.chunk_id });
    const c = (env.results && env.results[0]) || env.data || {};
    box.textContent = env.ok ? `${c.file_path}:${c.start_line}-${c.end_line}\n\n${c.text || ""}` : `${env.error.code}: ${env.error.message}`;
  } else {
    box.textContent = n.file_path || n.label;
  }
}

// -- health -------------------------------------------------------------------------------

async function loadHealth() {
  const env = await api("/api/doctor", { project: state.project });
  const box = $("#doctor");
  if (!env.ok) { errorBox(box, env); } else {
    const d = env.data || {};
    const findings = d.findings || [];
    box.replaceChildren(...[el("p", {}, badge(d.status || (findings.length ? "degraded" : "ok")), " ", d.summary || `${findings.length} finding(s)`),
      ...findings.map((f) => el("div", { class: "finding" }, el("b", {}, f.code || f.check || "finding"), " ", f.message || "",
        f.fix ? el("pre", { class: "code" }, f.fix) : null))].filter(Boolean));
  }
  const mem = await api("/api/records", { project: state.project, untagged: "true", includeEphemeral: "true" });
  const items = mem.records || (mem.data && mem.data.records) || [];
  $("#untagged").replaceChildren(...items.map((r) => el("li", {}, badge(r.kind), " ", r.title || r.id)));
  if (mem.ok === false) $("#untagged").append(el("li", { class: "muted" }, mem.error.message));
  else if (!items.length) $("#untagged").append(el("li", { class: "muted" }, "Every record has tags."));
}

// -- start --------------------------------------------------------------------------------

async function start() {
  $("#auth").classList.add("hidden"); document.querySelector("main").classList.remove("hidden");
  const health = await api("/api/health");
  if (!health.ok) return;
  showTab((location.hash || "#overview").slice(1) || "overview");
  for (const k of ["trap", "decision", "spec", "plan", "note", "review", "scratch", "state", "log", "prompt", "session"]) $("#mkind").append(el("option", {}, k));
}

document.querySelectorAll("nav button").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
$("#project").addEventListener("change", (e) => { state.project = e.target.value; });
$("#search-form").addEventListener("submit", runSearch);
$("#memory-form").addEventListener("submit", loadMemory);
$("#graph-form").addEventListener("submit", drawGraph);
$("#auth-form").addEventListener("submit", (e) => {
  e.preventDefault(); state.token = $("#token").value.trim(); sessionStorage.setItem("lm-token", state.token); start().catch(() => {});
});
start().catch(() => {});
