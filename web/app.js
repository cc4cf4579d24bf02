/*
 * flexq dashboard: a single page, no framework, no build step.
 *
 * Data: one server-sent-events stream (/ui/stream) carries every object of
 * the dashboard's kinds and then each committed change; the page keeps
 * them in `db` (kind -> "ns/name" -> object) and re-renders the current
 * view at most every 250 ms. Job logs follow the API's log subresource
 * (?follow=true); queue positions come from Kueue's visibility API. All
 * requests go to the page's own origin (the server's CSP says so too).
 *
 * Views (location.hash): #/ overview, #/jobs, #/job/NS/WORKLOAD,
 * #/capacity, #/events. Each view builds its frame once and fills its
 * parts on every update, so an input keeps its focus and a log its text.
 */
"use strict";

const db = {};
let synced = false;
let dirty = false;
const ui = { filter: "", state: "", evfilter: "" };
let positions = {}; // "ns/name" -> {cq, lq}
let posAt = 0;

const $ = (id) => document.getElementById(id);

function esc(s) {
  return String(s == null ? "" : s).replace(/[&<>"']/g, (c) =>
    ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function list(kind) {
  return Object.values(db[kind] || {});
}

function get(kind, ns, name) {
  return (db[kind] || {})[(ns || "") + "/" + name];
}

function key(o) {
  return (o.metadata.namespace || "") + "/" + o.metadata.name;
}

function cond(o, type) {
  return ((o.status || {}).conditions || []).find((c) => c.type === type);
}

function isTrue(o, type) {
  const c = cond(o, type);
  return !!c && c.status === "True";
}

function ms(ts) {
  const t = Date.parse(ts || "");
  return isNaN(t) ? 0 : t;
}

function dur(msec) {
  let s = Math.max(0, Math.round(msec / 1000));
  if (s < 120) return s + "s";
  if (s < 7200) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  if (s < 172800) return Math.floor(s / 3600) + "h" + String(Math.floor(s / 60) % 60).padStart(2, "0") + "m";
  return Math.floor(s / 86400) + "d" + (Math.floor(s / 3600) % 24) + "h";
}

function ago(ts) {
  return ts ? dur(Date.now() - ms(ts)) + " ago" : "";
}

/* Quantities: "2500m" -> 2.5, "64Gi" -> 68719476736, 16 -> 16. */
function qty(v) {
  if (v == null) return 0;
  if (typeof v === "number") return v;
  const m = /^([0-9.eE+-]+)([a-zA-Z]*)$/.exec(String(v).trim());
  if (!m) return 0;
  const mult = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15,
    Ki: 1024, Mi: 1048576, Gi: 1073741824, Ti: 1099511627776 }[m[2]];
  return parseFloat(m[1]) * (mult == null ? 1 : mult);
}

function fmtQty(v, res) {
  if (/memory|storage/.test(res)) {
    const u = ["B", "Ki", "Mi", "Gi", "Ti", "Pi"];
    let i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return v === 0 ? "0" : (Math.round(v * 10) / 10) + u[i];
  }
  if (v >= 1e6) return (Math.round(v / 1e5) / 10) + "M";
  return String(Math.round(v * 100) / 100);
}

/* --- the live stream ---------------------------------------------------- */

function connect() {
  const es = new EventSource("/ui/stream");
  es.addEventListener("reset", () => {
    for (const k of Object.keys(db)) delete db[k];
    synced = false;
  });
  es.addEventListener("synced", () => {
    synced = true;
    $("live").textContent = "live";
    $("live").className = "live ok";
    render();
  });
  es.onmessage = (ev) => {
    const c = JSON.parse(ev.data);
    const m = (db[c.kind] = db[c.kind] || {});
    if (c.type === "DELETED") delete m[key(c.object)];
    else m[key(c.object)] = c.object;
    if (c.kind === "Event") trimEvents();
    dirty = true;
  };
  es.onerror = () => {
    $("live").textContent = "reconnecting";
    $("live").className = "live down";
  };
}

function trimEvents() {
  const m = db.Event;
  const ks = Object.keys(m);
  if (ks.length <= 600) return;
  ks.sort((a, b) => +m[a].metadata.resourceVersion - +m[b].metadata.resourceVersion);
  for (const k of ks.slice(0, ks.length - 500)) delete m[k];
}

/* --- workloads, in plain words ----------------------------------------- */

function ownerOf(wl) {
  const o = (wl.metadata.ownerReferences || [])[0];
  return o ? { kind: o.kind, name: o.name } : { kind: "Workload", name: wl.metadata.name };
}

function stateOf(wl) {
  if (isTrue(wl, "Finished")) {
    const c = cond(wl, "Finished");
    return c.reason === "Failed" || /fail/i.test(c.message || "") ? "Failed" : "Finished";
  }
  if (isTrue(wl, "Evicted") && (wl.status || {}).admission) return "Evicting";
  if (isTrue(wl, "Admitted")) return isTrue(wl, "PodsReady") ? "Running" : "Admitted";
  if (isTrue(wl, "QuotaReserved")) return "WaitingForChecks";
  if ((wl.spec || {}).active === false) return "Deactivated";
  return "Pending";
}

const stateClass = { Running: "ok", Admitted: "info", Finished: "ok", Failed: "bad",
  Evicting: "bad", WaitingForChecks: "warn", Pending: "warn", Deactivated: "" };

function badge(state) {
  return `<span class="pill ${stateClass[state] || ""}">${esc(state)}</span>`;
}

/* The flavor its accelerators landed on (else its first podset's). */
function flavorOf(wl) {
  const psa = ((wl.status || {}).admission || {}).podSetAssignments || [];
  let first = "";
  for (const a of psa) {
    for (const [res, f] of Object.entries(a.flavors || {})) {
      if (!first) first = f;
      if (res !== "cpu" && res !== "memory") return f;
    }
  }
  return first;
}

function provreqOf(wl) {
  return list("ProvisioningRequest").filter((p) =>
    ((p.metadata.annotations || {})["flexq.dev/workload"] === wl.metadata.name) &&
    p.metadata.namespace === wl.metadata.namespace)
    .sort((a, b) => +b.metadata.resourceVersion - +a.metadata.resourceVersion)[0];
}

function podsOf(wl) {
  const own = ownerOf(wl);
  return list("Pod").filter((p) => {
    if (p.metadata.namespace !== wl.metadata.namespace) return false;
    const l = p.metadata.labels || {};
    return l["ray.io/originated-from-cr-name"] === own.name ||
      l["batch.kubernetes.io/job-name"] === own.name || l["job-name"] === own.name ||
      (l["batch.kubernetes.io/job-name"] || "").startsWith(own.name + "-");
  });
}

/* Why a workload waits (or what it does), in a sentence. */
function explain(wl) {
  const st = stateOf(wl);
  const cq = ((wl.status || {}).admission || {}).clusterQueue;
  const pos = positions[key(wl)];
  if (st === "Finished" || st === "Failed") {
    const c = cond(wl, "Finished");
    return { cls: st === "Failed" ? "bad" : "ok", text: `${st}: ${c.message || c.reason}` };
  }
  if (st === "Evicting") {
    const c = cond(wl, "Evicted");
    return { cls: "bad", text: `Being evicted (${c.reason}): ${c.message || ""}. Its quota is released and it goes back to the queue.` };
  }
  if (st === "Running") return { cls: "ok", text: `Running on ${flavorOf(wl)} in ${cq}; all pods are ready.` };
  if (st === "Admitted") {
    const pods = podsOf(wl);
    const ready = pods.filter((p) => isTrue(p, "Ready")).length;
    return { cls: "ok", text: `Admitted on ${flavorOf(wl)} in ${cq}; waiting for its pods to start (${ready} of ${pods.length} ready).` };
  }
  if (st === "WaitingForChecks") {
    const checks = ((wl.status || {}).admissionChecks || []).filter((c) => c.state !== "Ready");
    const pr = provreqOf(wl);
    let t = `Quota is reserved on ${flavorOf(wl)} in ${cq}, but it is not admitted until ` +
      checks.map((c) => `check ${c.name} is Ready (now ${c.state}${c.message ? ": " + c.message : ""})`).join(" and ") + ".";
    if (pr) {
      const last = ((pr.status || {}).conditions || []).slice(-1)[0];
      t += ` ProvisioningRequest ${pr.metadata.name} asks for the nodes` +
        (last ? ` (${last.type}=${last.status}, ${ago(last.lastTransitionTime)})` : "") + ".";
    }
    return { cls: "", text: t };
  }
  if (st === "Deactivated") return { cls: "bad", text: "Deactivated (spec.active=false): it is not queued until reactivated." };
  const c = cond(wl, "QuotaReserved");
  let t = c && c.message ? `Waiting for quota: ${c.message}.` : "Queued; the scheduler has not looked at it yet.";
  const rq = (wl.status || {}).requeueState;
  if (rq && rq.requeueAt) t += ` Backing off until ${new Date(ms(rq.requeueAt)).toLocaleTimeString()}.`;
  if (pos) t += ` Position ${pos.cq + 1} in its ClusterQueue, ${pos.lq + 1} in ${wl.spec.queueName}.`;
  return { cls: "", text: t };
}

function waitedRan(wl) {
  const created = ms(wl.metadata.creationTimestamp);
  const adm = isTrue(wl, "Admitted") ? ms(cond(wl, "Admitted").lastTransitionTime) : 0;
  const fin = isTrue(wl, "Finished") ? ms(cond(wl, "Finished").lastTransitionTime) : 0;
  const end = fin || Date.now();
  return {
    waited: adm ? adm - created : (fin ? fin - created : Date.now() - created),
    ran: adm ? end - adm : null,
  };
}

/* What the job's nodes have cost while it ran: each node it used, at its
 * pool's price, for the time the job held it (nodes are whole hosts for
 * accelerators). status.cost wins when the engine wrote one. */
function costOf(wl) {
  const c = (wl.status || {}).cost;
  if (c && c.usd != null) return parseFloat(c.usd);
  const wr = waitedRan(wl);
  if (wr.ran == null) return null;
  const nodes = new Set(podsOf(wl).map((p) => (p.spec || {}).nodeName).filter(Boolean));
  let usd = 0;
  for (const n of nodes) {
    const node = get("Node", "", n);
    const pool = node && get("NodePool", "", (node.metadata.labels || {})["cloud.google.com/gke-nodepool"]);
    const price = pool ? parseFloat((((pool.status || {}).cost) || {}).pricePerNodeHour || 0) : 0;
    usd += price * wr.ran / 3600000;
  }
  return nodes.size ? usd : null;
}

function refreshPositions() {
  if (Date.now() - posAt < 2000) return;
  posAt = Date.now();
  const cqs = list("ClusterQueue").filter((c) => ((c.status || {}).pendingWorkloads || 0) > 0);
  if (!cqs.length) { positions = {}; return; }
  Promise.all(cqs.map((c) =>
    fetch(`/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/${encodeURIComponent(c.metadata.name)}/pendingworkloads`)
      .then((r) => r.ok ? r.json() : { items: [] }).catch(() => ({ items: [] }))))
    .then((rs) => {
      const p = {};
      for (const r of rs)
        for (const it of r.items || [])
          p[it.metadata.namespace + "/" + it.metadata.name] = { cq: it.positionInClusterQueue, lq: it.positionInLocalQueue };
      positions = p;
      dirty = true;
    });
}

/* --- charts ---------------------------------------------------------- */

function niceTicks(lo, hi, n) {
  if (hi <= lo) hi = lo + 1;
  const step0 = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= step0);
  const ticks = [];
  const first = Math.floor(lo / step), last = Math.ceil(hi / step - 1e-9);
  for (let i = first; i <= last; i++) ticks.push(+(i * step).toPrecision(6));
  return ticks;
}

/* An SVG line chart of points [{x, y}] with axes and a dot per point. */
function lineChart(points, xlabel, ylabel) {
  const W = 640, H = 240, L = 56, R = 16, T = 14, B = 36;
  if (!points.length) return `<div class="empty">No ${esc(ylabel)} reported yet.</div>`;
  const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
  const xt = niceTicks(Math.min(...xs), Math.max(...xs), 6);
  const yt = niceTicks(Math.min(0, Math.min(...ys)), Math.max(...ys), 4);
  const x0 = xt[0], x1 = xt[xt.length - 1], y0 = yt[0], y1 = yt[yt.length - 1];
  const sx = (x) => L + (x - x0) / (x1 - x0 || 1) * (W - L - R);
  const sy = (y) => H - B - (y - y0) / (y1 - y0 || 1) * (H - T - B);
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(ylabel)} per ${esc(xlabel)}">`;
  for (const y of yt) s += `<line class="grid" x1="${L}" x2="${W - R}" y1="${sy(y)}" y2="${sy(y)}"/><text x="${L - 6}" y="${sy(y) + 4}" text-anchor="end">${y}</text>`;
  for (const x of xt) s += `<text x="${sx(x)}" y="${H - B + 16}" text-anchor="middle">${x}</text>`;
  s += `<line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/><line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>`;
  s += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle">${esc(xlabel)}</text>`;
  s += `<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">${esc(ylabel)}</text>`;
  s += `<polyline points="${points.map((p) => sx(p.x) + "," + sy(p.y)).join(" ")}"/>`;
  for (const p of points) s += `<circle class="pt" r="3.5" cx="${sx(p.x)}" cy="${sy(p.y)}"><title>${esc(xlabel)} ${p.x}: ${p.y}</title></circle>`;
  return s + "</svg>";
}

/* --- overview --------------------------------------------------------- */

function usageBars(cq) {
  const st = cq.status || {};
  const res = {}, adm = {};
  for (const f of st.flavorsReservation || [])
    for (const r of f.resources || []) res[f.name + "/" + r.name] = r;
  /* flavorsUsage counts admitted workloads only; without it, all
   * reserved quota is shown as in use */
  for (const f of st.flavorsUsage || st.flavorsReservation || [])
    for (const r of f.resources || []) adm[f.name + "/" + r.name] = r;
  let h = "";
  for (const g of (cq.spec || {}).resourceGroups || []) {
    for (const f of g.flavors || []) {
      h += `<div class="flavor" data-flavor="${esc(f.name)}"><h4>${esc(f.name)}</h4>`;
      for (const r of f.resources || []) {
        const nominal = qty(r.nominalQuota);
        const got = res[f.name + "/" + r.name] || {};
        const used = qty(got.total), borrowed = qty(got.borrowed);
        /* Kueue configs write "no limit" as a huge quota (the tutorial's dws
         * flavor: 1000000000 and 1000000000Gi) */
        const unbounded = nominal >= 1e9 * (/memory|storage/.test(r.name) ? 1073741824 : 1);
        const scale = unbounded ? Math.max(used, 1) * 4 : Math.max(nominal + qty(r.borrowingLimit || 0), used, 1e-9);
        const own = Math.min(used - borrowed, nominal);
        const admitted = Math.min(qty((adm[f.name + "/" + r.name] || {}).total), own);
        const pct = (v) => (100 * v / scale).toFixed(2);
        h += `<div class="bar-row" data-resource="${esc(r.name)}"><span class="mono">${esc(r.name)}</span>` +
          `<div class="bar${unbounded ? " unbounded" : ""}"><div class="r" style="width:${pct(own)}%"></div>` +
          `<div class="u" style="width:${pct(admitted)}%"></div>` +
          (borrowed > 0 ? `<div class="b" style="left:${(100 * own / scale).toFixed(2)}%;width:${(100 * borrowed / scale).toFixed(2)}%"></div>` : "") +
          `</div><span class="used">${fmtQty(used, r.name)} / ${unbounded ? "no cap" : fmtQty(nominal, r.name)}` +
          (borrowed > 0 ? ` <span class="pill warn">+${fmtQty(borrowed, r.name)} borrowed</span>` : "") + `</span></div>`;
      }
      h += "</div>";
    }
  }
  return h;
}

function cohortTree() {
  const cohorts = list("Cohort");
  const cqs = list("ClusterQueue");
  const parentOf = (c) => (c.spec || {}).parentName || (c.spec || {}).parent || "";
  const names = new Set(cohorts.map((c) => c.metadata.name));
  for (const q of cqs) if ((q.spec || {}).cohort) names.add(q.spec.cohort);
  const kids = (name) => {
    let h = "";
    for (const c of cohorts.filter((c) => parentOf(c) === name)) h += node(c.metadata.name);
    for (const n of [...names].filter((n) => !cohorts.find((c) => c.metadata.name === n) && name === "")) h += node(n);
    return h;
  };
  const node = (name) => {
    let h = `<li>&#9670; <b>${esc(name)}</b> <span class="muted">cohort</span><ul>${kidsOf(name)}`;
    for (const q of cqs.filter((q) => (q.spec || {}).cohort === name)) h += `<li>&#9632; ${esc(q.metadata.name)}</li>`;
    return h + "</ul></li>";
  };
  const kidsOf = (name) => cohorts.filter((c) => parentOf(c) === name).map((c) => node(c.metadata.name)).join("");
  let h = kids("");
  for (const q of cqs.filter((q) => !(q.spec || {}).cohort)) h += `<li>&#9632; ${esc(q.metadata.name)} <span class="muted">(no cohort)</span></li>`;
  return `<div class="tree"><ul>${h}</ul></div>`;
}

function viewOverview(m) {
  if (m.dataset.view !== "overview") {
    m.dataset.view = "overview";
    m.innerHTML = `<h1>Overview</h1><div id="stats" class="stats"></div><div id="cqs" class="grid"></div>` +
      `<h2>Cohorts</h2><div id="tree" class="card"></div>`;
  }
  const wls = list("Workload");
  const count = (s) => wls.filter((w) => stateOf(w) === s).length;
  const nodes = list("Node");
  const usd = list("NodePool").reduce((a, p) => a + parseFloat((((p.status || {}).cost) || {}).usd || 0), 0);
  $("stats").innerHTML = [
    [count("Pending") + count("WaitingForChecks"), "waiting"],
    [count("Admitted") + count("Running"), "admitted or running"],
    [count("Finished"), "finished"],
    [nodes.filter((n) => isTrue(n, "Ready")).length + " / " + nodes.length, "nodes ready"],
    ["$" + usd.toFixed(2), "node cost so far"],
  ].map(([v, l]) => `<div class="stat"><b>${esc(v)}</b><span>${esc(l)}</span></div>`).join("");
  const cqs = list("ClusterQueue");
  $("cqs").innerHTML = cqs.length ? cqs.map((cq) => {
    const st = cq.status || {};
    const active = isTrue(cq, "Active");
    return `<div class="card cq" data-cq="${esc(cq.metadata.name)}"><div class="cqhead"><h3>${esc(cq.metadata.name)}</h3>` +
      `<span class="pill ${active ? "ok" : "bad"}">${active ? "Active" : "Inactive"}</span>` +
      ((cq.spec || {}).cohort ? `<span class="muted">cohort ${esc(cq.spec.cohort)}</span>` : "") +
      `<span class="pill warn">${st.pendingWorkloads || 0} pending</span>` +
      `<span class="pill info">${st.reservingWorkloads || 0} reserving</span>` +
      `<span class="pill ok">${st.admittedWorkloads || 0} admitted</span></div>` +
      usageBars(cq) +
      `<div class="legend"><i style="background:var(--used)"></i>used by admitted workloads` +
      `<i style="background:var(--reserve)"></i>reserved, waiting on admission checks` +
      `<i style="background:var(--borrow)"></i>borrowed from the cohort</div></div>`;
  }).join("") : `<div class="card empty">No ClusterQueues yet: apply a queue configuration (flexq apply -f ...).</div>`;
  $("tree").innerHTML = cohortTree();
}

/* --- jobs ---------------------------------------------------------------- */

function jobRows() {
  return list("Workload").map((wl) => {
    const own = ownerOf(wl);
    const wr = waitedRan(wl);
    const pos = positions[key(wl)];
    return { wl, name: own.name, kind: own.kind, ns: wl.metadata.namespace, queue: (wl.spec || {}).queueName || "",
      flavor: flavorOf(wl), state: stateOf(wl), waited: wr.waited, ran: wr.ran, cost: costOf(wl),
      pos: pos ? pos.cq + 1 : null, created: ms(wl.metadata.creationTimestamp), why: shortWhy(wl) };
  }).sort((a, b) => b.created - a.created || a.name.localeCompare(b.name));
}

/* A few words for the jobs table; the job page has the whole sentence. */
function shortWhy(wl) {
  const st = stateOf(wl);
  if (st === "WaitingForChecks")
    return ((wl.status || {}).admissionChecks || []).filter((c) => c.state !== "Ready")
      .map((c) => `check ${c.name}: ${c.state}`).join(", ");
  if (st === "Pending") {
    const c = cond(wl, "QuotaReserved");
    const t = c && c.message ? c.message : "queued";
    return t.length > 90 ? t.slice(0, 87) + "..." : t;
  }
  if (st === "Admitted") return "starting pods";
  if (st === "Evicting") return (cond(wl, "Evicted") || {}).reason || "";
  return "";
}

function viewJobs(m) {
  if (m.dataset.view !== "jobs") {
    m.dataset.view = "jobs";
    m.innerHTML = `<h1>Jobs</h1><div class="toolbar"><input id="filter" type="search" placeholder="Filter: name, queue, flavor, state..." value="${esc(ui.filter)}">` +
      `<select id="statef"><option value="">all states</option>${Object.keys(stateClass).map((s) => `<option${ui.state === s ? " selected" : ""}>${s}</option>`).join("")}</select>` +
      `<span id="jcount" class="muted"></span></div><div class="tablewrap"><table id="jobs"><thead><tr>` +
      `<th>Name</th><th>Namespace</th><th>Queue</th><th>Flavor</th><th>State</th><th class="num">Position</th>` +
      `<th class="num">Waited</th><th class="num">Ran</th><th class="num">Cost</th><th>Why</th></tr></thead><tbody></tbody></table></div>`;
    $("filter").addEventListener("input", (e) => { ui.filter = e.target.value; render(); });
    $("statef").addEventListener("change", (e) => { ui.state = e.target.value; render(); });
  }
  const f = ui.filter.toLowerCase();
  const rows = jobRows().filter((r) => (!ui.state || r.state === ui.state) &&
    (!f || [r.name, r.ns, r.queue, r.flavor, r.state, r.kind].join(" ").toLowerCase().includes(f)));
  $("jcount").textContent = rows.length + " shown";
  $("jobs").tBodies[0].innerHTML = rows.length ? rows.map((r) =>
    `<tr data-job="${esc(r.name)}"><td><a href="#/job/${encodeURIComponent(r.ns)}/${encodeURIComponent(r.wl.metadata.name)}">${esc(r.name)}</a> <span class="muted">${esc(r.kind)}</span></td>` +
    `<td>${esc(r.ns)}</td><td>${esc(r.queue)}</td><td class="flavor">${esc(r.flavor)}</td><td class="state">${badge(r.state)}</td>` +
    `<td class="num">${r.pos ? "#" + r.pos : ""}</td><td class="num">${dur(r.waited)}</td><td class="num">${r.ran == null ? "" : dur(r.ran)}</td>` +
    `<td class="num">${r.cost == null ? "" : "$" + r.cost.toFixed(2)}</td><td class="muted why-s">${esc(r.why)}</td></tr>`).join("")
    : `<tr><td colspan="10" class="empty">No jobs${f || ui.state ? " match" : " yet"}.</td></tr>`;
}

/* --- one job ------------------------------------------------------------ */

let logCtl = null;
let logFor = "";
let logText = "";

function jobKindPath(own, ns) {
  const p = own.kind === "RayJob" ? "/apis/ray.io/v1" : own.kind === "Job" ? "/apis/batch/v1" : "";
  const plural = own.kind === "RayJob" ? "rayjobs" : "jobs";
  return p ? `${p}/namespaces/${encodeURIComponent(ns)}/${plural}/${encodeURIComponent(own.name)}` : "";
}

function followLog(wl) {
  const own = ownerOf(wl);
  const id = key(wl);
  if (logFor === id) return;
  stopLog();
  logFor = id;
  logText = "";
  const base = jobKindPath(own, wl.metadata.namespace);
  if (!base) return;
  const ctl = new AbortController();
  logCtl = ctl;
  const start = () => fetch(base + "/log?follow=true", { signal: ctl.signal }).then((r) => {
    if (!r.ok) throw new Error(r.status);
    const rd = r.body.getReader();
    const dec = new TextDecoder();
    const pump = () => rd.read().then(({ done, value }) => {
      if (done) return;
      logText += dec.decode(value, { stream: true });
      if (logText.length > 400000) logText = logText.slice(-300000);
      dirty = true;
      return pump();
    });
    return pump();
  }).catch(() => {
    /* no log yet (pods not started): try again shortly */
    if (!ctl.signal.aborted) setTimeout(() => { if (!ctl.signal.aborted) { logText = ""; start(); } }, 2000);
  });
  start();
}

function stopLog() {
  if (logCtl) logCtl.abort();
  logCtl = null;
  logFor = "";
}

/* Metrics points from the log ("Epoch 3: Loss 0.1234") and status.metrics. */
function lossPoints(job) {
  const pts = new Map();
  for (const m of logText.matchAll(/Epoch\s+(\d+)\s*:\s*Loss\s+([0-9.eE+-]+)/g)) pts.set(+m[1], +m[2]);
  const sm = ((job || {}).status || {}).metrics;
  if (sm && sm.epoch != null && sm.loss != null) pts.set(+sm.epoch, +sm.loss);
  return [...pts.entries()].sort((a, b) => a[0] - b[0]).map(([x, y]) => ({ x, y }));
}

function timeline(wl) {
  const c0 = wl.metadata.creationTimestamp;
  const t0 = ms(c0);
  const items = [{ label: "Created", at: c0, cls: "done" }];
  const qr = cond(wl, "QuotaReserved");
  if (qr && qr.status === "True") items.push({ label: `Quota reserved in ${wl.status.admission ? wl.status.admission.clusterQueue : ""} (${flavorOf(wl)})`, at: qr.lastTransitionTime, cls: "done" });
  else items.push({ label: "Quota reserved", note: qr ? qr.message : "not yet", cls: "wait" });
  for (const ac of (wl.status || {}).admissionChecks || [])
    items.push({ label: `Check ${ac.name}: ${ac.state}`, at: ac.lastTransitionTime, note: ac.message,
      cls: ac.state === "Ready" ? "done" : ac.state === "Rejected" ? "fail" : "wait" });
  const add = (type, label) => {
    const c = cond(wl, type);
    if (c && c.status === "True") items.push({ label, at: c.lastTransitionTime, cls: type === "Evicted" ? "fail" : "done", note: type === "Evicted" ? c.message : "" });
    else if (type !== "Evicted") items.push({ label, cls: "", note: "" });
  };
  add("Admitted", "Admitted");
  add("PodsReady", "Pods ready");
  add("Evicted", "Evicted");
  add("Finished", "Finished");
  return `<ul class="timeline">` + items.map((i) =>
    `<li class="${i.cls}">${esc(i.label)}${i.at ? `<span class="t">+${dur(ms(i.at) - t0)} &middot; ${esc(new Date(ms(i.at)).toLocaleTimeString())}</span>` : ""}` +
    (i.note ? `<div class="muted">${esc(i.note)}</div>` : "") + "</li>").join("") + "</ul>";
}

function podsets(wl) {
  const psa = {};
  for (const a of ((wl.status || {}).admission || {}).podSetAssignments || []) psa[a.name] = a;
  const pods = podsOf(wl);
  const rows = ((wl.spec || {}).podSets || []).map((ps) => {
    const a = psa[ps.name] || {};
    const fl = [...new Set(Object.values(a.flavors || {}))].join(", ");
    const use = Object.entries(a.resourceUsage || {}).map(([r, v]) => `${r} ${v}`).join(", ");
    const landed = {};
    for (const p of pods) {
      const l = p.metadata.labels || {};
      const group = l["ray.io/group"] || l["ray.io/node-type"] || "";
      const match = ps.name === group || (ps.name === "head" && l["ray.io/node-type"] === "head") ||
        (ps.name === "submitter" && (l["batch.kubernetes.io/job-name"] || l["job-name"]));
      if (!match || !(p.spec || {}).nodeName) continue;
      const n = get("Node", "", p.spec.nodeName);
      const pool = n ? (n.metadata.labels || {})["cloud.google.com/gke-nodepool"] : "";
      landed[p.spec.nodeName] = pool;
    }
    const where = Object.entries(landed).map(([n, p]) => `<span class="pill">${esc(n)}${p ? ` <span class="muted">${esc(p)}</span>` : ""}</span>`).join(" ");
    const none = isTrue(wl, "Finished") ? "pods gone (finished)" : isTrue(wl, "Admitted") ? "pods pending" : "not placed yet";
    return `<tr><td>${esc(ps.name)}</td><td class="num">${a.count != null ? a.count : ps.count}</td><td>${esc(fl)}</td><td class="mono">${esc(use)}</td><td>${where || `<span class="muted">${none}</span>`}</td></tr>`;
  }).join("");
  return `<div class="tablewrap"><table><thead><tr><th>Podset</th><th class="num">Count</th><th>Flavor</th><th>Quota used</th><th>Nodes</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function viewJob(m, ns, name) {
  const wl = get("Workload", ns, name);
  const id = "job:" + ns + "/" + name;
  if (m.dataset.view !== id) {
    m.dataset.view = id;
    m.innerHTML = `<p><a href="#/jobs">&larr; Jobs</a></p><h1 id="jtitle"></h1><div id="why" class="why"></div>` +
      `<div class="two"><div class="card"><h2>Timeline</h2><div id="tl"></div></div>` +
      `<div class="card"><h2>Loss per epoch</h2><div id="chart"></div></div></div>` +
      `<h2>Podsets and where they landed</h2><div id="ps"></div>` +
      `<h2>Log <span class="muted" id="logstate"></span></h2><pre id="log" class="log"></pre>`;
  }
  if (!wl) {
    $("jtitle").textContent = name;
    $("why").textContent = synced ? "This workload no longer exists." : "Loading...";
    return;
  }
  const own = ownerOf(wl);
  const job = get(own.kind, ns, own.name);
  followLog(wl);
  const wr = waitedRan(wl);
  $("jtitle").innerHTML = `${esc(own.name)} <span class="muted">${esc(own.kind)} in ${esc(ns)}</span> ${badge(stateOf(wl))}` +
    ` <span class="pill">waited ${dur(wr.waited)}</span>` + (wr.ran != null ? `<span class="pill">ran ${dur(wr.ran)}</span>` : "") +
    (costOf(wl) != null ? `<span class="pill">$${costOf(wl).toFixed(2)}</span>` : "");
  const ex = explain(wl);
  $("why").className = "why " + ex.cls;
  $("why").textContent = ex.text;
  $("tl").innerHTML = timeline(wl);
  $("chart").innerHTML = lineChart(lossPoints(job), "epoch", "loss");
  $("ps").innerHTML = podsets(wl);
  const pre = $("log");
  if (pre.textContent.length !== logText.length) {
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 20;
    pre.textContent = logText;
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }
  $("logstate").textContent = !logText ? "waiting for the pods to write" :
    isTrue(wl, "Finished") ? "complete" : "following";
}

/* --- capacity ------------------------------------------------------------ */

const scaleReasons = new Set(["ScaledUpGroup", "ScaleDown", "TriggeredScaleUp", "NotTriggerScaleUp",
  "FailedToScaleUpGroup", "NodesUnavailable", "ScaleUp", "ScaledDown"]);

function prState(p) {
  for (const s of ["CapacityRevoked", "BookingExpired", "Failed", "Provisioned", "Accepted"])
    if (isTrue(p, s)) return s;
  return "Pending";
}

function eventsNewest(filter) {
  return list("Event").filter(filter).sort((a, b) =>
    ms(b.lastTimestamp) - ms(a.lastTimestamp) || +b.metadata.resourceVersion - +a.metadata.resourceVersion);
}

function eventRows(evs) {
  return evs.map((e) => `<tr><td class="muted">${esc(ago(e.lastTimestamp))}</td>` +
    `<td><span class="pill ${e.type === "Warning" ? "bad" : ""}">${esc(e.type)}</span></td><td>${esc(e.reason)}</td>` +
    `<td class="mono">${esc(e.involvedObject.kind)}/${esc(e.involvedObject.name)}</td><td>${esc(e.message)}` +
    (e.count > 1 ? ` <span class="pill">&times;${e.count}</span>` : "") + "</td></tr>").join("");
}

function viewCapacity(m) {
  if (m.dataset.view !== "capacity") {
    m.dataset.view = "capacity";
    m.innerHTML = `<h1>Capacity</h1><h2>Node pools</h2><div id="pools" class="pools"></div>` +
      `<h2>ProvisioningRequests</h2><div class="tablewrap"><table id="prs"><thead><tr><th>Name</th><th>Class</th><th>For workload</th>` +
      `<th>State</th><th>Conditions</th><th class="num">Age</th></tr></thead><tbody></tbody></table></div>` +
      `<h2>Stockouts</h2><div id="stock"></div>` +
      `<h2>Scale events</h2><div class="tablewrap"><table id="scale"><thead><tr><th>When</th><th>Type</th><th>Reason</th><th>Object</th><th>Message</th></tr></thead><tbody></tbody></table></div>`;
  }
  const nodes = list("Node");
  const interesting = (k) => /tpu|accelerator|gke-queued|spot|flex-start|provisioning|zone/.test(k);
  $("pools").innerHTML = list("NodePool").map((p) => {
    const sp = p.spec || {}, st = p.status || {}, as = sp.autoscaling || {};
    const mine = nodes.filter((n) => (n.metadata.labels || {})["cloud.google.com/gke-nodepool"] === p.metadata.name);
    const flex = sp.queuedProvisioning || sp.flexStart || (sp.config || {}).flexStart;
    return `<div class="card pool" data-pool="${esc(p.metadata.name)}"><div class="cqhead"><h3>${esc(p.metadata.name)}</h3>` +
      `<span class="mono">${esc(sp.machineType || "")}</span><span class="muted">${esc(sp.location || "")}</span>` +
      (flex ? `<span class="pill info">flex-start</span>` : "") + (sp.spot ? `<span class="pill">spot</span>` : "") +
      `<span class="pill ${st.phase === "Running" ? "ok" : ""}">${esc(st.phase || "")}</span></div>` +
      `<p class="muted">${st.readyNodeCount || 0} of ${st.nodeCount || 0} nodes ready` +
      (as.enabled ? ` &middot; autoscaling ${as.minNodeCount || 0}&ndash;${as.maxNodeCount || 0}` : "") +
      ` &middot; $${parseFloat((st.cost || {}).pricePerNodeHour || 0).toFixed(2)}/node-hour &middot; $${parseFloat((st.cost || {}).usd || 0).toFixed(2)} so far</p>` +
      (mine.length ? `<div class="tablewrap"><table><thead><tr><th>Node</th><th>State</th><th>Labels</th><th>Taints</th></tr></thead><tbody>` +
        mine.map((n) => `<tr><td class="mono">${esc(n.metadata.name)}</td><td>${isTrue(n, "Ready") ? '<span class="pill ok">Ready</span>' : '<span class="pill warn">NotReady</span>'}` +
          ((n.spec || {}).unschedulable ? ' <span class="pill">cordoned</span>' : "") + `</td>` +
          `<td>${Object.entries(n.metadata.labels || {}).filter(([k]) => interesting(k)).map(([k, v]) => `<span class="pill mono" title="${esc(k)}">${esc(k.replace(/^.*\//, ""))}=${esc(v)}</span>`).join(" ")}</td>` +
          `<td>${((n.spec || {}).taints || []).map((t) => `<span class="pill warn mono">${esc(t.key)}${t.value ? "=" + esc(t.value) : ""}:${esc(t.effect)}</span>`).join(" ")}</td></tr>`).join("") +
        `</tbody></table></div>` : `<div class="empty">No nodes (scaled to zero).</div>`) + `</div>`;
  }).join("") || `<div class="card empty">No node pools.</div>`;
  const prs = list("ProvisioningRequest").sort((a, b) => ms(b.metadata.creationTimestamp) - ms(a.metadata.creationTimestamp));
  $("prs").tBodies[0].innerHTML = prs.length ? prs.map((p) => {
    const s = prState(p);
    const cls = s === "Provisioned" ? "ok" : s === "Accepted" || s === "Pending" ? "warn" : "bad";
    const wl = (p.metadata.annotations || {})["flexq.dev/workload"] || "";
    return `<tr data-pr="${esc(p.metadata.name)}"><td class="mono">${esc(p.metadata.namespace)}/${esc(p.metadata.name)}</td>` +
      `<td class="mono">${esc((p.spec || {}).provisioningClassName)}</td>` +
      `<td>${wl ? `<a href="#/job/${encodeURIComponent(p.metadata.namespace)}/${encodeURIComponent(wl)}">${esc(wl)}</a>` : ""}</td>` +
      `<td><span class="pill ${cls}">${esc(s)}</span></td><td>${((p.status || {}).conditions || []).map((c) =>
        `<div><span class="pill ${c.status === "True" ? "ok" : ""}">${esc(c.type)}=${esc(c.status)}</span> <span class="muted">${esc(c.reason || "")} &middot; ${esc(ago(c.lastTransitionTime))}</span>` +
        (c.message ? `<div class="muted">${esc(c.message)}</div>` : "") + `</div>`).join("")}</td>` +
      `<td class="num">${dur(Date.now() - ms(p.metadata.creationTimestamp))}</td></tr>`;
  }).join("") : `<tr><td colspan="6" class="empty">No ProvisioningRequests.</td></tr>`;
  const stock = eventsNewest((e) => e.type === "Warning" && /FailedToScaleUp|NodesUnavailable|Stockout|ResourcePoolExhausted/i.test(e.reason + " " + e.message));
  $("stock").innerHTML = stock.length ? `<div class="tablewrap"><table><tbody>${eventRows(stock.slice(0, 50))}</tbody></table></div>` :
    `<div class="card empty">No stockouts reported.</div>`;
  const scale = eventsNewest((e) => e.involvedObject.kind === "NodePool" || scaleReasons.has(e.reason));
  $("scale").tBodies[0].innerHTML = scale.length ? eventRows(scale.slice(0, 100)) : `<tr><td colspan="5" class="empty">No scale events yet.</td></tr>`;
}

/* --- events ---------------------------------------------------------- */

function viewEvents(m) {
  if (m.dataset.view !== "events") {
    m.dataset.view = "events";
    m.innerHTML = `<h1>Events</h1><div class="toolbar"><input id="evfilter" type="search" placeholder="Filter: reason, object, message..." value="${esc(ui.evfilter)}"></div>` +
      `<div class="tablewrap"><table id="events"><thead><tr><th>When</th><th>Type</th><th>Reason</th><th>Object</th><th>Message</th></tr></thead><tbody></tbody></table></div>`;
    $("evfilter").addEventListener("input", (e) => { ui.evfilter = e.target.value; render(); });
  }
  const f = ui.evfilter.toLowerCase();
  const evs = eventsNewest((e) => !f || [e.type, e.reason, e.involvedObject.kind, e.involvedObject.name, e.message].join(" ").toLowerCase().includes(f));
  $("events").tBodies[0].innerHTML = evs.length ? eventRows(evs.slice(0, 300)) : `<tr><td colspan="5" class="empty">No events.</td></tr>`;
}

/* --- routing --------------------------------------------------------- */

function render() {
  dirty = false;
  const m = $("main");
  const parts = (location.hash.replace(/^#\/?/, "") || "").split("/").map(decodeURIComponent);
  const page = parts[0] || "overview";
  for (const a of document.querySelectorAll("#nav a[data-page]"))
    a.classList.toggle("on", a.dataset.page === (page === "job" ? "jobs" : page));
  if (page !== "job") stopLog();
  refreshPositions();
  if (page === "jobs") viewJobs(m);
  else if (page === "job") viewJob(m, parts[1] || "", parts[2] || "");
  else if (page === "capacity") viewCapacity(m);
  else if (page === "events") viewEvents(m);
  else viewOverview(m);
  document.title = "flexq - " + (page === "job" ? parts[2] : page);
}

window.addEventListener("hashchange", () => { $("main").dataset.view = ""; render(); });
setInterval(() => { if (dirty) render(); }, 250);
setInterval(() => { dirty = true; }, 1000); /* ages and durations */
connect();
render();
