// fusebox dashboard: renders the snapshots of api/events (Server-Sent
// Events). The first event of a stream is a full snapshot; each update
// carries every supplier's current numbers and the newest point of its
// series, which this page appends. No framework, no build step.
"use strict";

const OUTCOMES = ["success", "failure", "ignored"];
const REFUSALS = ["open", "saturated", "busy", "queue-full", "closed", "throttled"];
const PRIORITIES = ["critical", "default", "sheddable"];
const STATES = ["open", "forced-open", "half-open", "closed", "disabled"];
const REASONS = {
  "none": "no transition yet",
  "consecutive-failures": "failures in a row",
  "error-kind": "error-kind threshold",
  "failure-rate": "failure rate",
  "slow-call-rate": "slow-call rate",
  "saturation": "bulkhead full of stuck calls",
  "queue-full": "queue full",
  "manual": "by an operator",
  "reset-timeout": "reset timeout passed, probing",
  "probes-succeeded": "probes succeeded",
  "probe-failed": "probe failed",
  "probe-deferred": "probe found no free slot",
  "queue-drained": "queue drained",
  "remote": "another instance of the fleet",
  "ready-to-trip": "custom trip rule",
};
const ACTIONS = {
  "trip": ["Trip", "Open the breaker of %s for one reset timeout? Its calls fail fast until a probe succeeds."],
  "force-open": ["Force open", "Force the breaker of %s open? Every call fails fast, with no probes, until someone resets it."],
  "reset": ["Reset", "Reset the breaker of %s? It closes at once and calls go to the supplier again."],
};

let model = null; // the current Snapshot, series merged
let lastEvent = 0; // Date.now() of the last event
const tiles = new Map(); // id → {el, parts}
const shedTiles = new Map(); // shedder name → {el, parts}

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag) {
  return document.createElementNS("http://www.w3.org/2000/svg", tag);
}

function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min " + (s % 60) + " s";
  const h = Math.floor(m / 60);
  if (h < 48) return h + " h " + (m % 60) + " min";
  return Math.floor(h / 24) + " d " + (h % 24) + " h";
}

function clock(t) {
  return new Date(t).toLocaleTimeString([], { hour12: false });
}

function rate(v) {
  if (v === undefined) return "0";
  if (v >= 100) return Math.round(v).toString();
  if (v >= 10) return v.toFixed(1).replace(/\.0$/, "");
  return v.toFixed(2).replace(/\.?0+$/, "") || "0";
}

function latency(ms) {
  if (!ms) return "—";
  if (ms < 1) return Math.round(ms * 1000) + " µs";
  if (ms < 1000) return (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + " ms";
  return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
}

function tileID(id) {
  // One to one, and without whitespace, which an element ID cannot hold.
  return "s-" + encodeURIComponent(id);
}

// --- merging events into the model ---------------------------------------

function applySnapshot(s) {
  model = s;
}

function applyUpdate(u) {
  if (!model) return;
  const old = new Map(model.suppliers.map((s) => [s.id, s]));
  const keep = u.history;
  const horizon = Date.parse(u.time) - u.history * u.interval_ms * 1.5;
  for (const s of u.suppliers) {
    const prev = old.get(s.id);
    if (!prev) continue;
    const ser = prev.series;
    const add = s.series;
    const t = ser.t.concat(add.t);
    let from = Math.max(0, t.length - keep);
    while (from < t.length && t[from] < horizon) from++;
    const merged = { t: t.slice(from), calls: {}, refused: {} };
    for (const k of OUTCOMES) merged.calls[k] = ser.calls[k].concat(add.calls[k]).slice(from);
    for (const k of REFUSALS) merged.refused[k] = ser.refused[k].concat(add.refused[k]).slice(from);
    s.series = merged;
  }
  const oldSheds = new Map((model.shedders || []).map((d) => [d.name, d]));
  for (const d of u.shedders || []) {
    const prev = oldSheds.get(d.name);
    if (!prev) continue;
    const t = prev.series.t.concat(d.series.t);
    let from = Math.max(0, t.length - keep);
    while (from < t.length && t[from] < horizon) from++;
    const merged = { t: t.slice(from), admitted: prev.series.admitted.concat(d.series.admitted).slice(from), shed: {} };
    for (const k of PRIORITIES) merged.shed[k] = prev.series.shed[k].concat(d.series.shed[k]).slice(from);
    d.series = merged;
  }
  model = u;
}

// --- rendering ------------------------------------------------------------

function buildTile(s) {
  const t = el("article", "tile");
  t.id = tileID(s.id);
  t.dataset.id = s.id;
  const head = el("div", "tile-head");
  const h = el("h2");
  const a = el("a", "", s.id);
  a.href = "#" + encodeURIComponent(t.id);
  h.append(a);
  const badge = el("span", "badge");
  const sat = el("span", "badge sat", "saturated");
  const shadow = el("span", "badge shadow", "shadow");
  shadow.title = "shadow mode: every rule is evaluated, nothing is refused";
  head.append(h, badge, sat, shadow);
  const since = el("p", "line since");
  const would = el("p", "line would");
  const probe = el("p", "line probe");
  const policy = el("p", "line policy");
  policy.hidden = true;
  const slots = meter("slots");
  const queue = meter("queue");
  const nums = el("dl", "nums");
  const p50 = num(nums, "p50");
  const p99 = num(nums, "p99");
  const overdue = num(nums, "overdue");
  const late = num(nums, "late");
  const shed = num(nums, "refused c/d/s");
  const calls = spark("calls/s", OUTCOMES);
  const refused = spark("refused/s", REFUSALS);
  t.append(head, since, would, probe, policy, slots.root, queue.root, nums, calls.root, refused.root);
  const actions = el("div", "actions");
  for (const [name, [label]] of Object.entries(ACTIONS)) {
    const b = el("button", name === "reset" ? "" : "danger", label);
    b.type = "button";
    b.dataset.action = name;
    b.addEventListener("click", () => confirmAction(t.dataset.id, name));
    actions.append(b);
  }
  t.append(actions);
  const fleet = el("details", "fleet");
  fleet.hidden = true;
  const fsum = el("summary", "", "fleet: every replica");
  const fbody = el("div", "fleet-body");
  fleet.append(fsum, fbody);
  const p = { el: t, badge, sat, shadow, would, since, probe, policy, slots, queue, p50, p99, overdue, late, shed, calls, refused, actions, fleet, fbody, fleetAt: 0, fleetBusy: false };
  fleet.addEventListener("toggle", () => { if (fleet.open) fetchFleet(p); });
  t.append(fleet);
  return p;
}

function meter(label) {
  const root = el("div", "meter");
  const track = el("div", "track");
  track.setAttribute("role", "img");
  const fill = el("div", "fill");
  const over = el("div", "fill overdue");
  track.append(over, fill);
  const value = el("span", "value");
  root.append(el("span", "label", label), track, value);
  return { root, track, fill, over, value };
}

function num(dl, label) {
  const d = el("div");
  const dd = el("dd", "", "—");
  d.append(el("dt", "", label), dd);
  dl.append(d);
  return dd;
}

function spark(title, keys) {
  const root = el("figure", "spark");
  const cap = el("figcaption");
  cap.append(el("span", "title", title));
  const vals = {};
  for (const k of keys) {
    const key = el("span", "key");
    const sw = el("i", "s-" + k);
    const v = el("b", "", "0");
    key.append(sw, k + " ", v);
    cap.append(key);
    vals[k] = v;
  }
  const g = svg("svg");
  g.setAttribute("viewBox", "0 0 100 30");
  g.setAttribute("preserveAspectRatio", "none");
  g.setAttribute("role", "img");
  const lines = {};
  for (const k of keys) {
    const p = svg("polyline");
    p.setAttribute("class", "s-" + k);
    g.append(p);
    lines[k] = p;
  }
  const scale = el("div", "scale");
  root.append(cap, g, scale);
  return { root, vals, lines, svg: g, scale, keys };
}

function drawSpark(sp, t, series, now, span, label) {
  let max = 0;
  for (const k of sp.keys) for (const v of series[k]) max = Math.max(max, v);
  const top = max > 0 ? max * 1.1 : 1;
  const from = now - span;
  const desc = [];
  for (const k of sp.keys) {
    const v = series[k];
    const pts = [];
    for (let i = 0; i < t.length; i++) {
      const x = Math.max(0, ((t[i] - from) / span) * 100);
      const y = 29 - (v[i] / top) * 28;
      pts.push(x.toFixed(2) + "," + y.toFixed(2));
    }
    sp.lines[k].setAttribute("points", pts.join(" "));
    const cur = v.length ? v[v.length - 1] : 0;
    sp.vals[k].textContent = rate(cur);
    desc.push(k + " " + rate(cur));
  }
  sp.svg.setAttribute("aria-label", label + " over the last " + duration(span) + ", now " + desc.join(", "));
  sp.scale.textContent = t.length ? "peak " + rate(max) + "/s · last " + duration(span) : "no calls in the last " + duration(span);
}

function updateMeter(m, used, cap, over, text, aria) {
  const pct = cap > 0 ? (100 * used) / cap : 0;
  const opct = cap > 0 ? (100 * over) / cap : 0;
  m.over.style.width = opct + "%";
  m.fill.style.width = Math.max(0, pct - opct) + "%";
  m.fill.classList.toggle("full", cap > 0 && used >= cap);
  m.value.textContent = text;
  m.track.setAttribute("aria-label", aria);
}

function updateTile(p, s, snap, span) {
  const t = p.el;
  t.dataset.state = s.state;
  t.dataset.rank = s.rank;
  t.dataset.saturated = s.saturated;
  p.badge.textContent = s.state;
  p.sat.hidden = !s.saturated;
  t.dataset.shadow = s.shadow;
  p.shadow.hidden = !s.shadow;
  p.would.hidden = !s.shadow;
  if (s.shadow) {
    const by = Object.entries(s.totals.shadowed || {}).filter(([, n]) => n > 0);
    const total = by.reduce((a, [, n]) => a + n, 0);
    p.would.textContent = "shadow: nothing refused; enforce would have refused " + total +
      (by.length ? " (" + by.map(([k, n]) => k + " " + n).join(" · ") + ")" : "");
  }
  const reason = REASONS[s.reason] || s.reason;
  p.since.replaceChildren(el("b", "", s.state + " for " + duration(s.in_state_ms)), " · " + reason + (s.kind ? " (" + s.kind + ")" : "") +
    (s.reason === "none" ? "" : " · since " + clock(s.since)));
  let probe = "";
  if (s.shadow && (s.state === "open" || s.state === "half-open")) {
    probe = "shadow breaker " + s.state + ": calls still go through";
  } else if (s.state === "open") {
    probe = s.probe_in_ms > 0 ? "next probe in " + duration(s.probe_in_ms) + " (" + clock(s.probe_at) + ")" : "probe due: the next call is the probe";
  } else if (s.state === "half-open") {
    probe = "probing: calls fail fast until the probe ends";
  } else if (s.state === "forced-open") {
    probe = "no probes until an operator resets it";
  } else if (s.state === "disabled") {
    probe = "breaker disabled: every call goes through";
  }
  p.probe.textContent = probe;
  p.probe.hidden = probe === "";
  const pol = s.policy;
  p.policy.hidden = !pol;
  if (pol) {
    p.policy.textContent = "retries " + pol.retries + " (" + pol.retries_refused + " refused by the budget) · hedges " +
      pol.hedges + " (" + pol.hedges_won + " won, " + pol.hedges_refused + " refused by the budget)";
  }
  const limit = s.adaptive ? " (adaptive: " + s.limit_reason + ")" : "";
  updateMeter(p.slots, s.in_use, s.slots, Math.min(s.overdue, s.in_use), s.in_use + " / " + s.slots + " in use" + limit,
    s.in_use + " of " + s.slots + " slots in use, " + s.overdue + " overdue" + limit);
  if (s.queue_cap > 0) {
    updateMeter(p.queue, s.queued, s.queue_cap, 0, s.queued + " / " + s.queue_cap, s.queued + " of " + s.queue_cap + " queue places taken");
  } else {
    updateMeter(p.queue, 0, 0, 0, "no queue", "no queue");
  }
  p.p50.textContent = latency(s.latency_p50_ms);
  p.p99.textContent = latency(s.latency_p99_ms);
  p.overdue.textContent = s.overdue;
  p.overdue.classList.toggle("bad", s.overdue > 0);
  p.late.textContent = s.totals.late;
  const bp = s.totals.rejected_by_priority || {};
  p.shed.textContent = (bp.critical || 0) + " / " + (bp.default || 0) + " / " + (bp.sheddable || 0);
  p.shed.title = "refused calls by priority: critical / default / sheddable";
  const now = Date.parse(snap.time);
  drawSpark(p.calls, s.series.t, s.series.calls, now, span, "calls per second by outcome");
  drawSpark(p.refused, s.series.t, s.series.refused, now, span, "refused calls per second by reason");
  p.actions.hidden = !snap.control;
  p.fleet.hidden = !snap.fleet;
  // The fleet's view is fetched only while the section is open, at most
  // every FLEET_EVERY (the handler asks Redis at most every 2 s anyway).
  if (snap.fleet && p.fleet.open && Date.now() - p.fleetAt >= FLEET_EVERY) fetchFleet(p);
}

// An inbound shedder (package shed): its state, estimates and shed/s by
// priority, beside the suppliers.
function buildShedder(d) {
  const t = el("article", "tile shedder");
  t.id = "d-" + encodeURIComponent(d.name);
  const head = el("div", "tile-head");
  const h = el("h2");
  const a = el("a", "", d.name);
  a.href = "#" + encodeURIComponent(t.id);
  h.append(a);
  const badge = el("span", "badge");
  const shadow = el("span", "badge shadow", "shadow");
  shadow.title = "shadow mode: the shedder decides and reports, nothing is refused";
  head.append(h, el("span", "kind", "shedder"), badge, shadow);
  const est = el("p", "line est");
  const inflight = meter("in flight");
  const nums = el("dl", "nums");
  const admitted = num(nums, "admitted");
  const shed = num(nums, "shed c/d/s");
  const tenants = num(nums, "tenants");
  const rates = spark("shed/s", PRIORITIES);
  t.append(head, est, inflight.root, nums, rates.root);
  return { el: t, badge, shadow, est, inflight, admitted, shed, tenants, rates };
}

function updateShedder(p, d, snap, span) {
  p.el.dataset.state = d.state;
  p.badge.textContent = d.state;
  p.shadow.hidden = !d.shadow;
  p.est.replaceChildren(el("b", "", "capacity ≈ " + rate(d.capacity_rps) + "/s"),
    " · run-queue delay " + (d.delay_ms ? latency(d.delay_ms) : "0 ms") + " a request · " + (d.shadow ? "would refuse " : "refusing ") +
    Math.round(d.drop_rate * 100) + " % of arrivals");
  const limit = d.limit > 0 ? d.limit : 0;
  updateMeter(p.inflight, d.in_flight, limit, 0, d.in_flight + (limit ? " / " + limit : ""),
    d.in_flight + " requests in flight" + (limit ? ", limit " + limit : ", no limit"));
  p.admitted.textContent = d.admitted;
  p.shed.textContent = (d.shed.critical || 0) + " / " + (d.shed.default || 0) + " / " + (d.shed.sheddable || 0);
  p.shed.title = (d.shadow ? "requests shadow mode would have shed" : "requests shed") + " by priority: critical / default / sheddable";
  p.tenants.textContent = d.tenants;
  drawSpark(p.rates, d.series.t, d.series.shed, Date.parse(snap.time), span,
    (d.shadow ? "requests that would have been shed" : "requests shed") + " per second by priority");
}

function renderShedders(snap, span) {
  const box = $("shedders");
  const list = snap.shedders || [];
  const seen = new Set();
  list.forEach((d, i) => {
    seen.add(d.name);
    let p = shedTiles.get(d.name);
    if (!p) {
      p = buildShedder(d);
      shedTiles.set(d.name, p);
    }
    updateShedder(p, d, snap, span);
    if (box.children[i] !== p.el) box.insertBefore(p.el, box.children[i] || null);
  });
  for (const [name, p] of shedTiles) {
    if (!seen.has(name)) {
      p.el.remove();
      shedTiles.delete(name);
    }
  }
  box.hidden = list.length === 0;
  return list.filter((d) => d.state === "overload").length;
}

function matches(s, words) {
  const hay = (s.id + " " + s.state + " " + s.reason + " " + (REASONS[s.reason] || "") + (s.saturated ? " saturated" : "")).toLowerCase();
  return words.every((w) => hay.includes(w));
}

function render() {
  if (!model) return;
  const snap = model;
  document.title = (snap.counts.open || snap.counts["forced-open"] ? "⚠ " : "") + snap.title + " dashboard";
  $("title").textContent = snap.title;
  const words = $("filter").value.toLowerCase().split(/\s+/).filter(Boolean);
  const box = $("tiles");
  // Every sparkline spans the same time: the history, or less while the
  // page has not seen that much yet, so that a fresh page is not empty.
  const now = Date.parse(snap.time);
  let first = now;
  for (const s of snap.suppliers) if (s.series.t.length) first = Math.min(first, s.series.t[0]);
  for (const d of snap.shedders || []) if (d.series.t.length) first = Math.min(first, d.series.t[0]);
  const span = Math.min(snap.history * snap.interval_ms, Math.max(now - first, 10 * snap.interval_ms));
  const seen = new Set();
  let shown = 0;
  let i = 0;
  for (const s of snap.suppliers) {
    seen.add(s.id);
    let p = tiles.get(s.id);
    if (!p) {
      p = buildTile(s);
      tiles.set(s.id, p);
    }
    updateTile(p, s, snap, span);
    const vis = matches(s, words);
    p.el.hidden = !vis;
    if (vis) shown++;
    // Keep the DOM in the snapshot's (trouble-first) order, moving only
    // what is out of place so that focus and hover survive.
    if (box.children[i] !== p.el) box.insertBefore(p.el, box.children[i] || null);
    i++;
  }
  for (const [id, p] of tiles) {
    if (!seen.has(id)) {
      p.el.remove();
      tiles.delete(id);
    }
  }
  $("empty").hidden = snap.suppliers.length > 0;
  $("empty").textContent = "No supplier to show yet.";
  if (snap.suppliers.length > 0 && shown === 0) {
    $("empty").hidden = false;
    $("empty").textContent = "No supplier matches the filter.";
  }
  const more = snap.total - snap.suppliers.length;
  $("more").hidden = more <= 0;
  $("more").textContent = more + " more suppliers are not shown (the healthiest; see Options.MaxSuppliers).";
  const sum = $("summary");
  sum.replaceChildren();
  for (const st of STATES) {
    const n = snap.counts[st] || 0;
    if (!n && st !== "closed" && st !== "open") continue;
    const li = el("li", "", n + " " + st);
    li.dataset.state = st;
    sum.append(li);
  }
  const overloaded = renderShedders(snap, span);
  if (overloaded) {
    const li = el("li", "", overloaded + " shedder" + (overloaded > 1 ? "s" : "") + " in overload");
    li.dataset.state = "open";
    sum.append(li);
  }
  const sat = snap.suppliers.filter((s) => s.saturated).length;
  if (sat) {
    const li = el("li", "", sat + " saturated");
    li.dataset.state = "half-open";
    sum.append(li);
  }
  $("updated").textContent = "updated " + clock(snap.time);
  if (!render.scrolled && location.hash) {
    render.scrolled = true;
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target) target.scrollIntoView();
  }
}

// --- connection -------------------------------------------------------------

function setConn(state, text) {
  const c = $("conn");
  c.dataset.conn = state;
  c.textContent = text;
}

let source = null;

function connect() {
  if (source) source.close();
  setConn("connecting", "connecting…");
  source = new EventSource("api/events");
  source.addEventListener("open", () => setConn("live", "live"));
  source.addEventListener("snapshot", (e) => {
    lastEvent = Date.now();
    applySnapshot(JSON.parse(e.data));
    setConn("live", "live");
    render();
  });
  source.addEventListener("update", (e) => {
    lastEvent = Date.now();
    applyUpdate(JSON.parse(e.data));
    render();
  });
  // The server ends each stream after Options.StreamLifetime: take a
  // new one now rather than after the browser's retry delay.
  source.addEventListener("end", () => connect());
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (too many pages open) or gone for good: the browser
      // will not retry by itself, so this page does.
      setConn("reconnecting", "disconnected, retrying…");
      setTimeout(connect, 3000);
    } else {
      setConn("reconnecting", "reconnecting…");
    }
  });
}

// A stream that went silent (a proxy holding it open, a paused laptop)
// is replaced.
setInterval(() => {
  if (!model || !lastEvent) return;
  const quiet = Date.now() - lastEvent;
  if (quiet > Math.max(5000, 4 * model.interval_ms)) {
    setConn("stale", "no update for " + duration(quiet) + ", reconnecting…");
    lastEvent = Date.now();
    connect();
  }
}, 1000);

// --- the fleet's view -------------------------------------------------------

const FLEET_EVERY = 3000;

async function fetchFleet(p) {
  if (p.fleetBusy) return;
  p.fleetBusy = true;
  p.fleetAt = Date.now();
  try {
    const r = await fetch("api/fleet?supplier=" + encodeURIComponent(p.el.dataset.id));
    const body = await r.text();
    if (r.ok) drawFleet(p.fbody, JSON.parse(body));
    else p.fbody.replaceChildren(el("p", "line bad", body.trim()));
  } catch (err) {
    p.fbody.replaceChildren(el("p", "line bad", "fleet view failed: " + err));
  } finally {
    p.fleetBusy = false;
    p.fleetAt = Date.now();
  }
}

function drawFleet(box, v) {
  const rows = v.replicas || [];
  const table = el("table", "fleet-replicas");
  const head = el("tr");
  for (const h of ["replica", "state", "reason", "for", "probe in"]) head.append(el("th", "", h));
  table.append(head);
  for (const r of rows) {
    const tr = el("tr");
    tr.dataset.state = r.state;
    const ms = (ns) => Math.round((ns || 0) / 1e6);
    tr.append(el("td", "", r.replica), el("td", "", r.state), el("td", "", REASONS[r.reason] || r.reason),
      el("td", "", duration(ms(r.for_ns))), el("td", "", r.state === "open" ? duration(ms(r.probe_in_ns)) : "—"));
    if (r.replica === v.prober) tr.classList.add("prober");
    table.append(tr);
  }
  const lease = el("p", "line fleet-prober", v.prober
    ? "probes next: " + v.prober + " (its lease has " + duration(Math.round((v.prober_left_ns || 0) / 1e6)) + " left)"
    : "probes next: nobody holds the probe lease");
  const o = v.override;
  const over = el("p", "line fleet-override", o
    ? "fleet-wide " + o.Action + " by " + o.Replica + (o.Reason ? ": " + o.Reason : "") + " (#" + o.Seq + ")"
    : "no fleet-wide override");
  box.replaceChildren(rows.length ? table : el("p", "line", "no replica has reported a state yet"), lease, over);
}

// --- operator actions ---------------------------------------------------------

function confirmAction(id, action) {
  const [label, text] = ACTIONS[action];
  const d = $("confirm");
  $("confirm-title").textContent = label + " " + id + "?";
  $("confirm-text").textContent = text.replace("%s", () => id); // a function: "$&" in a name is no pattern
  $("confirm-ok").textContent = label;
  d.returnValue = "";
  d.onclose = () => {
    if (d.returnValue === "ok") control(id, action);
  };
  d.showModal();
}

async function control(id, action) {
  let msg;
  try {
    const r = await fetch("api/control", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Fusebox-Control": "1" },
      body: JSON.stringify({ supplier: id, action }),
    });
    const body = await r.text();
    msg = r.ok ? id + ": " + JSON.parse(body).state : body.trim();
  } catch (err) {
    msg = "request failed: " + err;
  }
  const t = $("toast");
  t.textContent = msg;
  t.hidden = false;
  clearTimeout(control.timer);
  control.timer = setTimeout(() => (t.hidden = true), 4000);
}

$("filter").addEventListener("input", render);
connect();
