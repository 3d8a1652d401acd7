// CueDeck dashboard: one shell, rendered by path. Data comes from
// /dashboard/api/* with the bearer token kept in sessionStorage; a 401
// shows #token-form. Every page sets body[data-ready="1"] once its data is
// rendered, or body[data-error] with the message when loading failed.
"use strict";

const BASE = "/dashboard/";
const TOKEN_KEY = "cuedeck.token";
const SVG = "http://www.w3.org/2000/svg";
const PAGES = { "": "board", memories: "memories", search: "search", ops: "ops" };
const page = PAGES[location.pathname.slice(BASE.length).replace(/\/+$/, "")] || "board";

class AuthError extends Error {}

// el builds an element: el("div", {class: "x", "data-id": 1}, child, "text").
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  setAttrs(e, attrs);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
}

async function api(path, params) {
  const url = new URL(BASE + "api/" + path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== "" && v !== null && v !== undefined) url.searchParams.set(k, v);
  }
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(url, { headers, cache: "no-store" });
  if (resp.status === 401) {
    showTokenForm(token ? "The token was refused; enter another." : "");
    throw new AuthError("401 Unauthorized: enter a bearer token");
  }
  const text = await resp.text();
  let body;
  try { body = JSON.parse(text); } catch { body = { error: text.trim() }; }
  if (!resp.ok) {
    let msg = `${resp.status}: ${body.error || resp.statusText}`;
    if (resp.status === 429 && body.data && body.data.retry_after_seconds) msg += ` (retry in ${body.data.retry_after_seconds}s)`;
    throw new Error(msg);
  }
  return body;
}

function showTokenForm(note) {
  const form = document.getElementById("token-form");
  form.hidden = false;
  const input = document.getElementById("token");
  input.placeholder = note || "token";
  input.focus();
}

function setupTokenForm() {
  const form = document.getElementById("token-form");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = document.getElementById("token").value.trim();
    if (!v) return;
    sessionStorage.setItem(TOKEN_KEY, v);
    document.getElementById("token").value = "";
    form.hidden = true;
    // The 401 that showed the form is answered: whatever waits on the
    // page sees the next load's outcome, not that one.
    showError(null);
    delete document.body.dataset.ready;
    start();
  });
}

function showError(err) {
  const box = document.getElementById("error");
  if (!err) {
    box.hidden = true;
    box.textContent = "";
    delete document.body.dataset.error;
    return;
  }
  const msg = err.message || String(err);
  document.body.dataset.error = msg;
  if (err instanceof AuthError) return; // the token form says it
  box.textContent = msg;
  box.hidden = false;
}

function markReady() {
  showError(null);
  document.body.dataset.ready = "1";
}

function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  if (isNaN(d)) return s;
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function fmtAge(sec) {
  if (sec === null || sec === undefined) return "–";
  if (sec < 1) return "<1s";
  if (sec < 120) return Math.round(sec) + "s";
  if (sec < 7200) return Math.round(sec / 60) + "m";
  return Math.round(sec / 3600) + "h";
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many || one + "s"}`;
}

function usd(n) {
  return "$" + Number(n).toFixed(n < 1 ? 4 : 2);
}

let whoami = null;

async function loadWhoami() {
  whoami = await api("whoami");
  const who = whoami.token ? `token ${whoami.token}` : "no token";
  const repos = whoami.restricted ? `repos ${whoami.repos.join(", ") || "none"}` : "all repos";
  document.getElementById("whoami").textContent = `${who} · ${repos}`;
}

function repoSelect(id, selected) {
  const s = el("select", { id, name: "repo" }, el("option", { value: "" }, "all repos"));
  for (const r of (whoami && whoami.repos) || []) s.append(el("option", { value: r, selected: r === selected }, r));
  return s;
}

// ---- board ----------------------------------------------------------------

let boardRepo = new URLSearchParams(location.search).get("repo") || "";
let boardJSON = "";

async function renderBoard(app) {
  const data = await api("board", { repo: boardRepo });
  const json = JSON.stringify(data);
  if (json === boardJSON && document.getElementById("board")) return;
  boardJSON = json;
  const sel = repoSelect("board-repo", boardRepo);
  sel.addEventListener("change", () => {
    boardRepo = sel.value;
    history.replaceState(null, "", boardRepo ? "?repo=" + encodeURIComponent(boardRepo) : location.pathname);
    refresh();
  });
  const toolbar = el("div", { class: "toolbar" }, el("label", { for: "board-repo" }, "Repo"), sel,
    el("span", { class: "muted" }, `${plural(data.tasks.length, "task")}, ${plural(data.edges.length, "dependency", "dependencies")}`),
    data.truncated ? el("span", { class: "note" }, "(only the first tasks are shown)") : null);

  const board = el("div", { id: "board" });
  const multiRepo = new Set(data.tasks.map((t) => t.repo)).size > 1;
  for (const status of data.statuses) {
    const tasks = data.tasks.filter((t) => t.status === status);
    const col = el("section", { class: "column", "data-status": status },
      el("h3", {}, el("span", {}, status), el("span", { class: "muted" }, tasks.length)));
    for (const t of tasks) col.append(taskCard(t, multiRepo));
    board.append(col);
  }
  // Statuses the board does not know still get a column.
  for (const t of data.tasks) {
    if (!data.statuses.includes(t.status)) {
      let col = board.querySelector(`.column[data-status="${CSS.escape(t.status)}"]`);
      if (!col) {
        col = el("section", { class: "column", "data-status": t.status }, el("h3", {}, t.status));
        board.append(col);
      }
      col.append(taskCard(t, multiRepo));
    }
  }
  const graph = el("div", { id: "dep-graph" });
  graph.append(depGraph(data));
  app.replaceChildren(toolbar, board, el("h2", {}, "Dependencies"),
    el("p", { class: "muted" }, "Each task sits one column right of its deepest dependency; arrows point from a dependency to the task that needs it."),
    graph);
}

function taskCard(t, multiRepo) {
  const deps = t.depends_on.length ? "needs " + t.depends_on.join(", ") : null;
  const card = el("article", { class: "task", "data-id": t.id, "data-repo": t.repo, title: t.id },
    el("div", { class: "title" }, t.title),
    el("div", { class: "meta" },
      el("span", {}, t.id),
      el("span", { class: "badge " + (t.priority || "") }, t.priority),
      t.assignee ? el("span", {}, t.assignee) : null,
      multiRepo ? el("span", { class: "badge" }, t.repo) : null,
      deps ? el("span", {}, deps) : null));
  card.addEventListener("mouseenter", () => highlight(t.repo, t.id, true));
  card.addEventListener("mouseleave", () => highlight(t.repo, t.id, false));
  return card;
}

function highlight(repo, id, on) {
  const q = `[data-id="${CSS.escape(id)}"][data-repo="${CSS.escape(repo)}"]`;
  document.querySelectorAll(`.task${q}, g.node${q}`).forEach((e) => e.classList.toggle("highlight", on));
}

function truncate(s, n) {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

// depGraph draws the layered layout the API computed: layer → column,
// order → row; a long edge passes through the rows in "via".
function depGraph(data) {
  const W = 190, H = 46, GX = 70, GY = 22, PAD = 16;
  const key = (repo, id) => repo + "\u0000" + id;
  const byKey = new Map(data.tasks.map((t) => [key(t.repo, t.id), t]));
  // Missing dependencies get a dashed ghost in a column of their own.
  const ghosts = [];
  for (const e of data.edges) {
    if (!byKey.has(key(e.repo, e.from)) && !ghosts.some((g) => g.repo === e.repo && g.id === e.from)) ghosts.push({ repo: e.repo, id: e.from });
  }
  const shift = ghosts.length ? 1 : 0;
  const colX = (layer) => PAD + (layer + shift) * (W + GX);
  const rowY = (row) => PAD + row * (H + GY);
  let rows = Math.max(ghosts.length, 1);
  for (const t of data.tasks) rows = Math.max(rows, t.order + 1);
  for (const e of data.edges) for (const r of e.via || []) rows = Math.max(rows, r + 1);
  const width = PAD * 2 + (Math.max(data.layers, 1) + shift) * (W + GX) - GX;
  const height = PAD * 2 + rows * (H + GY) - GY;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "task dependency graph" });
  root.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    svg("path", { d: "M0,0 L10,5 L0,10 z" }))));
  const ghostPos = new Map(ghosts.map((g, i) => [key(g.repo, g.id), { x: PAD, y: rowY(i) }]));
  const posOf = (repo, id) => {
    const t = byKey.get(key(repo, id));
    return t ? { x: colX(t.layer), y: rowY(t.order), layer: t.layer } : ghostPos.get(key(repo, id));
  };
  const edges = svg("g", { class: "edges" });
  for (const e of data.edges) {
    const a = posOf(e.repo, e.from), b = posOf(e.repo, e.to);
    if (!a || !b) continue;
    // Waypoints: out of the dependency's right side, straight through
    // each gap row, into the task's left side.
    const pts = [[a.x + W, a.y + H / 2]];
    (e.via || []).forEach((row, k) => {
      const x = colX(a.layer + 1 + k), y = rowY(row) + H / 2;
      pts.push([x, y], [x + W, y]);
    });
    pts.push([b.x, b.y + H / 2]);
    let d = `M${pts[0][0]},${pts[0][1]}`;
    for (let k = 1; k < pts.length; k++) {
      const [x0, y0] = pts[k - 1], [x1, y1] = pts[k];
      if (y0 === y1) d += ` L${x1},${y1}`;
      else {
        const mx = (x0 + x1) / 2;
        d += ` C${mx},${y0} ${mx},${y1} ${x1},${y1}`;
      }
    }
    edges.append(svg("path", {
      class: "edge" + (e.missing ? " missing" : ""), "data-from": e.from, "data-to": e.to, "data-repo": e.repo,
      d, "marker-end": "url(#arrow)",
    }));
  }
  root.append(edges);
  const nodes = svg("g", { class: "nodes" });
  for (const g of ghosts) {
    const p = ghostPos.get(key(g.repo, g.id));
    nodes.append(svg("g", { class: "ghost", "data-id": g.id, "data-repo": g.repo, transform: `translate(${p.x},${p.y})` },
      svg("rect", { width: W, height: H, rx: 5 }),
      svg("text", { x: 8, y: 18 }, g.id),
      svg("text", { x: 8, y: 35 }, "missing task")));
  }
  for (const t of data.tasks) {
    const p = posOf(t.repo, t.id);
    const n = svg("g", { class: "node", "data-id": t.id, "data-repo": t.repo, "data-status": t.status, transform: `translate(${p.x},${p.y})` },
      svg("title", {}, `${t.id}: ${t.title} (${t.status})`),
      svg("rect", { width: W, height: H, rx: 5 }),
      svg("text", { x: 8, y: 18, class: "id" }, t.id + " · " + t.status),
      svg("text", { x: 8, y: 35 }, truncate(t.title, 28)));
    n.addEventListener("mouseenter", () => highlight(t.repo, t.id, true));
    n.addEventListener("mouseleave", () => highlight(t.repo, t.id, false));
    n.addEventListener("click", () => {
      const card = document.querySelector(`.task[data-id="${CSS.escape(t.id)}"][data-repo="${CSS.escape(t.repo)}"]`);
      if (card) card.scrollIntoView({ behavior: "smooth", block: "center" });
    });
    nodes.append(n);
  }
  root.append(nodes);
  return root;
}

// ---- memories -------------------------------------------------------------

const KINDS = ["decision", "rationale", "fact", "preference", "open_question", "experience"];
let memParams = Object.fromEntries(new URLSearchParams(location.search));

async function renderMemories(app) {
  if (!document.getElementById("memories-form")) {
    const q = el("input", { id: "memories-q", name: "q", type: "search", placeholder: "search memories (empty: newest)", value: memParams.q || "", size: 32 });
    const kind = el("select", { id: "memories-kind", name: "kind" }, el("option", { value: "" }, "any kind"),
      ...KINDS.map((k) => el("option", { value: k, selected: memParams.kind === k }, k.replace("_", " "))));
    const since = el("input", { id: "memories-since", name: "since", placeholder: "since (2w, 2026-01-01)", value: memParams.since || "", size: 18 });
    const form = el("form", { id: "memories-form", class: "toolbar" }, q, repoSelect("memories-repo", memParams.repo || ""), kind, since,
      el("button", { type: "submit" }, "Show"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      memParams = Object.fromEntries([...new FormData(form)].filter(([, v]) => v !== ""));
      history.replaceState(null, "", location.pathname + (Object.keys(memParams).length ? "?" + new URLSearchParams(memParams) : ""));
      refresh();
    });
    app.replaceChildren(form, el("p", { id: "memories-summary", class: "muted" }), el("ol", { id: "memories" }));
  }
  const data = await api("memories", memParams);
  const list = el("ol", { id: "memories", "data-order": "oldest-first" });
  for (const m of data.memories) list.append(memoryItem(m));
  document.getElementById("memories").replaceWith(list);
  const more = data.memories.length >= data.limit ? ` (the newest ${data.limit}; narrow the filters for older ones)` : "";
  document.getElementById("memories-summary").textContent =
    (data.query ? `${plural(data.memories.length, "memory", "memories")} matching “${data.query}”` : plural(data.memories.length, "memory", "memories")) + ", oldest first" + more;
}

function memoryItem(m) {
  const src = [];
  src.push("session " + (m.session || "?"));
  if (m.agent) src.push("agent " + m.agent);
  if (m.source && (m.source.start || m.source.end)) src.push(`transcript bytes ${m.source.start}–${m.source.end}`);
  if (m.provider) src.push("via " + m.provider + (m.model ? " " + m.model : ""));
  if (m.extractions > 1) src.push(`said in ${m.extractions} batches`);
  return el("li", { class: "memory", "data-id": m.repo + "." + m.hash, "data-kind": m.kind, "data-repo": m.repo },
    el("div", { class: "when" }, fmtTime(m.created_at), " · ", el("span", { class: "badge" }, m.kind.replace("_", " ")), " · ", m.repo,
      ` · confidence ${Number(m.confidence).toFixed(2)}`, m.outcome ? ` · outcome ${m.outcome}` : ""),
    el("div", { class: "content" }, m.content),
    m.rationale ? el("div", { class: "rationale" }, m.rationale) : null,
    m.files_touched && m.files_touched.length ? el("div", { class: "files" }, m.files_touched.join("  ")) : null,
    el("div", { class: "source" }, src.join(" · ")));
}

// ---- search ---------------------------------------------------------------

const MODES = ["hybrid", "keyword", "semantic", "rrf"];

function renderSearchForm(app) {
  const p = new URLSearchParams(location.search);
  const q = el("input", { id: "search-q", name: "q", type: "search", placeholder: "keywords or a question", value: p.get("q") || "", size: 36, required: true });
  const mode = el("select", { id: "search-mode", name: "mode" }, ...MODES.map((m) => el("option", { value: m, selected: (p.get("mode") || "hybrid") === m }, m)));
  const tags = el("input", { id: "search-tags", name: "tags", placeholder: "tags (a, b)", value: p.get("tags") || "", size: 12 });
  const prio = el("select", { id: "search-priority", name: "priority" }, el("option", { value: "" }, "any priority"),
    ...["low", "medium", "high", "critical"].map((v) => el("option", { value: v, selected: p.get("priority") === v }, v)));
  const assignee = el("input", { id: "search-assignee", name: "assignee", placeholder: "assignee", value: p.get("assignee") || "", size: 10 });
  const mem = el("input", { id: "search-memories", name: "memories", type: "checkbox", value: "1", checked: p.get("memories") === "1" });
  const form = el("form", { id: "search-form", class: "toolbar" }, q, mode, repoSelect("search-repo", p.get("repo") || ""), tags, prio, assignee,
    el("label", {}, mem, " memories too"), el("button", { id: "search-submit", type: "submit" }, "Search"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const params = Object.fromEntries([...new FormData(form)].filter(([, v]) => v !== ""));
    history.replaceState(null, "", location.pathname + "?" + new URLSearchParams(params));
    runSearch(params);
  });
  app.replaceChildren(form, el("p", { id: "search-summary", class: "muted" }, "Results appear here."), el("ol", { id: "search-results" }),
    el("div", { id: "search-memory-results" }));
  return Object.fromEntries([...p].filter(([, v]) => v !== ""));
}

async function runSearch(params) {
  const summary = document.getElementById("search-summary");
  summary.textContent = "Searching…";
  try {
    const data = await api("search", params);
    const list = el("ol", { id: "search-results", "data-count": data.results.length });
    for (const h of data.results) list.append(resultItem(h));
    document.getElementById("search-results").replaceWith(list);
    summary.textContent = `${plural(data.results.length, "result")} for “${data.query}” (${data.mode})`;
    const memBox = el("div", { id: "search-memory-results" });
    if (data.memories) {
      memBox.append(el("h2", {}, `Memories (${data.memories.length})`));
      const ol = el("ol", { class: "memory-results" });
      for (const m of data.memories) ol.append(memoryItem(m));
      memBox.append(ol);
    }
    document.getElementById("search-memory-results").replaceWith(memBox);
    document.body.dataset.searched = String(data.results.length);
    showError(null);
  } catch (err) {
    summary.textContent = "";
    showError(err);
  }
}

function resultItem(h) {
  const sec = h.section ? `${h.section.heading ? "§ " + h.section.heading + " · " : ""}lines ${h.section.line_range.start}–${h.section.line_range.end}` : "";
  return el("li", { class: "result", "data-path": h.path, "data-repo": h.repo || "" },
    el("div", {}, el("span", { class: "path" }, h.path), " ", h.repo ? el("span", { class: "badge" }, h.repo) : null),
    el("div", { class: "meta" }, `score ${h.score ?? 0} · ${(h.modes || []).join("+") || "keyword"} · ${h.tokens} tokens`, sec ? " · " + sec : "",
      h.relation ? " · " + h.relation : ""),
    h.anchors && h.anchors.length ? el("div", { class: "meta" }, "headings: " + h.anchors.join(" / ")) : null,
    h.fallback ? el("div", { class: "note" }, "fallback: " + h.fallback) : null);
}

// ---- ops ------------------------------------------------------------------

async function renderOps(app) {
  const d = await api("ops");
  const errs = d.errors || {};
  app.replaceChildren(el("div", { class: "grid" },
    lagPanel(d, errs), deadPanel(d.dead_letters, errs), budgetPanel(d.budget, errs), ratePanel(d, errs)),
  el("p", { class: "muted" }, "As of " + fmtTime(d.at) + "; refreshes every 5 seconds."));
}

function panel(id, title, attrs, ...children) {
  return el("section", Object.assign({ id, class: "panel" }, attrs), el("h2", {}, title), ...children);
}

function lagPanel(d, errs) {
  const feeds = el("table", { class: "feeds" }, el("tr", {}, el("th", {}, "feed"), el("th", { class: "num" }, "applied"),
    el("th", { class: "num" }, "head"), el("th", { class: "num" }, "behind"), el("th", { class: "num" }, "last applied"), el("th", {}, "")));
  const rep = d.materialisation;
  for (const f of (rep && rep.feeds) || []) {
    feeds.append(el("tr", { class: "feed", "data-feed": f.feed, "data-behind": f.behind },
      el("td", {}, f.feed), el("td", { class: "num" }, f.applied), el("td", { class: "num" }, f.head_known ? f.head : "–"),
      el("td", { class: "num" + (f.behind > 0 ? " lagging" : "") }, f.head_known ? f.behind : "?"),
      el("td", { class: "num" }, fmtAge(f.last_applied_age_seconds) + (f.last_applied_age_seconds != null ? " ago" : "")),
      el("td", {}, !f.replayed ? "replaying" : f.head_error ? el("span", { class: "lagging", title: f.head_error }, "head unreadable") : "")));
  }
  const queues = el("table", { class: "queues" }, el("tr", {}, el("th", {}, "queue"), el("th", { class: "num" }, "waiting"),
    el("th", { class: "num" }, "oldest"), el("th", {}, "consumers (pending / in flight)")));
  for (const q of d.ingest || []) {
    queues.append(el("tr", { class: "queue", "data-stream": q.stream, "data-waiting": q.waiting },
      el("td", {}, q.stream), el("td", { class: "num" }, q.waiting), el("td", { class: "num" }, fmtAge(q.oldest_age_seconds)),
      el("td", {}, q.consumers.map((c) => `${c.name} ${c.pending}/${c.ack_pending}`).join(", ") || "none")));
  }
  const state = !rep ? errs.materialisation : !rep.ready ? "replaying" : rep.lagging ? "lagging" : "up to date";
  return panel("lag", "Ingest and materialisation lag", { "data-state": state },
    el("p", { class: rep && rep.lagging ? "lagging" : "muted" }, "Edge: " + state),
    feeds, el("h3", {}, "Work queues"), queues, errs.ingest ? el("p", { class: "error" }, errs.ingest) : null);
}

function deadPanel(dl, errs) {
  if (!dl) return panel("dead-letters", "Dead letters", { "data-count": "" }, el("p", { class: "error" }, errs.dead_letters || "unknown"));
  const p = panel("dead-letters", "Dead letters", { "data-count": dl.count },
    el("div", { class: "big count" }, dl.count),
    el("p", { class: "muted" }, dl.count ? "events the workers gave up on, newest first" : "none: every event was handled"));
  for (const x of dl.latest) {
    p.append(el("div", { class: "dead", "data-seq": x.seq },
      el("div", {}, `#${x.seq} ${x.subject} · ${x.consumer || "?"} · ${x.deliveries || "?"} deliveries · ${fmtTime(x.at)}`),
      el("div", { class: "err" }, x.error)));
  }
  if (dl.hidden) p.append(el("p", { class: "muted" }, `${dl.hidden} more of repos this token may not read`));
  return p;
}

function budgetPanel(b, errs) {
  if (!b) return panel("budget", "LLM budget today", { "data-spent-usd": "", "data-limit-usd": "unknown" }, el("p", { class: "error" }, errs.budget || "unknown"));
  const limit = b.limit_usd === null || b.limit_usd === undefined ? "unknown" : String(b.limit_usd);
  const p = panel("budget", "LLM budget today", { "data-spent-usd": String(b.spent_usd), "data-limit-usd": limit, "data-limit-source": b.limit_source },
    el("div", { class: "big" }, usd(b.spent_usd), el("span", { class: "muted" },
      limit === "unknown" ? " of an unknown daily limit" : Number(limit) === 0 ? " (no daily cap)" : ` of ${usd(Number(limit))}`)));
  if (b.used_fraction !== null && b.used_fraction !== undefined) {
    const pct = Math.min(100, b.used_fraction * 100);
    const bar = el("div", {});
    bar.style.width = pct.toFixed(1) + "%";
    p.append(el("div", { class: "meter" + (b.used_fraction >= 1 ? " over" : b.used_fraction >= 0.8 ? " warn" : "") }, bar),
      el("p", { class: "muted" }, `${pct.toFixed(1)}% used`));
  }
  p.append(el("p", { class: "muted" }, `${b.day} (UTC) · ${b.calls} LLM calls · ${b.refused} refused by the budget` +
    (b.reserved_usd ? ` · ${usd(b.reserved_usd)} reserved` : "") + (b.recorded ? "" : " · no extractor spent anything today") +
    (limit === "unknown" ? " · this edge does not know the extractors' limit" : "")));
  return p;
}

function ratePanel(d, errs) {
  const total = (d.rate_limits || []).reduce((s, r) => s + r.count, 0);
  const calls = new Map((d.calls || []).map((c) => [c.tool, c.count]));
  const t = el("table", {}, el("tr", {}, el("th", {}, "tool"), el("th", { class: "num" }, "refused (429)"), el("th", { class: "num" }, "calls")));
  for (const r of d.rate_limits || []) {
    t.append(el("tr", { class: "rate", "data-tool": r.tool, "data-count": r.count }, el("td", {}, r.tool),
      el("td", { class: "num" }, r.count), el("td", { class: "num" }, calls.get(r.tool) ?? 0)));
  }
  return panel("rate-limits", "Rate-limit rejections", { "data-total": total },
    el("div", { class: "big" }, total),
    el("p", { class: "muted" }, total ? "calls refused since this edge started, by tool" : "no call refused since this edge started"),
    (d.rate_limits || []).length ? t : null,
    errs.rate_limits ? el("p", { class: "error" }, errs.rate_limits) : null);
}

// ---- main -----------------------------------------------------------------

const RENDER = { board: renderBoard, memories: renderMemories, ops: renderOps };
const REFRESH = { board: 30000, ops: 5000 };
let timer = null;

async function refresh() {
  try {
    await RENDER[page](document.getElementById("app"));
    markReady();
  } catch (err) {
    showError(err);
  }
}

async function start() {
  clearTimeout(timer);
  try {
    await loadWhoami();
  } catch (err) {
    showError(err);
    return;
  }
  if (page === "search") {
    const params = renderSearchForm(document.getElementById("app"));
    if (params.q) await runSearch(params);
    if (!document.body.dataset.error) markReady();
    return;
  }
  await refresh();
  const every = REFRESH[page];
  if (every) {
    const tick = async () => {
      if (!document.hidden && document.getElementById("token-form").hidden) await refresh();
      timer = setTimeout(tick, every);
    };
    timer = setTimeout(tick, every);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("#nav a").forEach((a) => a.classList.toggle("current", a.dataset.page === page));
  setupTokenForm();
  start();
});
