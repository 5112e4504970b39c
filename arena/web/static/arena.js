// okgin arena's pages: live updates, rating charts, the game viewer.
// Served from this origin only (the Content-Security-Policy allows no inline script), and it
// writes text, never HTML: every name and note reaches the page as a text node.
"use strict";

(function () {
  // ---- live: one event stream; on "change", fetch this page again and swap its [data-live] parts
  function startLive() {
    const url = document.body.dataset.liveUrl;
    if (!url || !window.EventSource) return;
    const status = document.getElementById("live-status");
    let updates = 0;
    let busy = false;
    let again = false;
    const source = new EventSource(url);
    async function refresh() {
      if (busy) { again = true; return; }
      busy = true;
      try {
        const resp = await fetch(window.location.href, { headers: { "Accept": "text/html" }, cache: "no-store" });
        if (resp.ok) {
          const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
          for (const fresh of doc.querySelectorAll("[data-live][id]")) {
            const old = document.getElementById(fresh.id);
            if (old) old.replaceWith(document.importNode(fresh, true));
          }
          updates += 1;
          document.body.dataset.updates = String(updates);
        }
      } finally {
        busy = false;
        if (again) { again = false; refresh(); }
      }
    }
    source.addEventListener("change", refresh);
    source.addEventListener("open", function () { if (status) status.classList.add("on"); document.body.dataset.liveOpen = "1"; });
    source.addEventListener("error", function () { if (status) status.classList.remove("on"); });
    window.addEventListener("pagehide", function () { source.close(); });
  }

  // ---- charts: a rating history as a line on a <canvas>, with the deviation as a band
  function drawChart(canvas) {
    let points;
    try { points = JSON.parse(canvas.dataset.points || "[]"); } catch (e) { points = []; }
    const ctx = canvas.getContext("2d");
    const w = canvas.width, h = canvas.height, pad = 34;
    ctx.clearRect(0, 0, w, h);
    ctx.font = "12px sans-serif";
    ctx.fillStyle = "#666";
    if (points.length === 0) {
      ctx.fillText("no rated games yet", pad, h / 2);
      canvas.dataset.drawn = "0";
      return;
    }
    let lo = Infinity, hi = -Infinity;
    for (const [, r, d] of points) { lo = Math.min(lo, r - d); hi = Math.max(hi, r + d); }
    if (hi - lo < 50) { const mid = (hi + lo) / 2; lo = mid - 25; hi = mid + 25; }
    const n = points.length;
    const x = (i) => pad + (n === 1 ? (w - 2 * pad) / 2 : i * (w - 2 * pad) / (n - 1));
    const y = (r) => h - pad / 2 - (r - lo) * (h - pad) / (hi - lo);
    ctx.strokeStyle = "#ddd";
    ctx.beginPath();
    for (let k = 0; k <= 4; k++) {
      const r = lo + k * (hi - lo) / 4;
      ctx.moveTo(pad, y(r)); ctx.lineTo(w - pad / 2, y(r));
      ctx.fillText(String(Math.round(r)), 0, y(r) + 4);
    }
    ctx.stroke();
    ctx.fillStyle = "rgba(40, 110, 200, 0.15)";
    ctx.beginPath();
    points.forEach(([, r, d], i) => (i ? ctx.lineTo(x(i), y(r + d)) : ctx.moveTo(x(i), y(r + d))));
    for (let i = n - 1; i >= 0; i--) ctx.lineTo(x(i), y(points[i][1] - points[i][2]));
    ctx.closePath();
    ctx.fill();
    ctx.strokeStyle = "#286ec8";
    ctx.lineWidth = 2;
    ctx.beginPath();
    points.forEach(([, r], i) => (i ? ctx.lineTo(x(i), y(r)) : ctx.moveTo(x(i), y(r))));
    ctx.stroke();
    ctx.fillStyle = "#286ec8";
    for (let i = 0; i < n; i++) { ctx.beginPath(); ctx.arc(x(i), y(points[i][1]), 2.5, 0, 2 * Math.PI); ctx.fill(); }
    canvas.dataset.drawn = String(n);
  }

  // ---- the game viewer: steps built by the server, drawn here; arrows, Home and End step
  const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function card(c) {
    return el("span", "card suit-" + c[1], c[0].replace("T", "10") + SUITS[c[1]]);
  }
  function cards(list) {
    const box = el("span", "cards");
    for (const c of list) box.appendChild(card(c));
    return box;
  }
  function startViewer() {
    const data = document.getElementById("steps");
    if (!data) return;
    const steps = JSON.parse(data.textContent);
    const players = JSON.parse(document.getElementById("players").textContent);
    const viewer = document.getElementById("viewer");
    const board = document.getElementById("board");
    const result = document.getElementById("result");
    const log = document.getElementById("log");
    let at = 0;
    function name(seat) { return seat === null || seat === undefined ? "nobody" : (players[seat] || "seat " + seat); }
    function layout(title, lay) {
      const box = el("div", "layout");
      box.appendChild(el("h3", null, title));
      for (const meld of lay.melds) { const row = el("div", "meld"); row.appendChild(cards(meld)); box.appendChild(row); }
      if (lay.layoffs && lay.layoffs.length) {
        const row = el("div", "layoffs", "laid off: ");
        for (const l of lay.layoffs) { row.appendChild(card(l.card)); row.appendChild(el("span", "onto", "on meld " + (l.meld + 1))); }
        box.appendChild(row);
      }
      const dw = el("div", "deadwood", "deadwood " + lay.deadwood + ": ");
      dw.appendChild(cards(lay.deadwood_cards));
      box.appendChild(dw);
      return box;
    }
    function show(i) {
      at = Math.max(0, Math.min(steps.length - 1, i));
      const s = steps[at];
      const t = s.table;
      document.getElementById("step-count").textContent = "step " + (at + 1) + " of " + steps.length + " · hand " + t.hand;
      document.getElementById("step-text").textContent = s.text;
      viewer.dataset.step = String(at + 1);
      viewer.dataset.kind = s.type;
      board.replaceChildren();
      t.hands.forEach(function (hand, seat) {
        const row = el("div", "seat" + (t.to_act === seat ? " to-act" : ""));
        row.appendChild(el("span", "who", name(seat)));
        row.appendChild(el("span", "role", t.roles[seat]));
        row.appendChild(el("span", "score", t.scores[seat]));
        row.appendChild(cards(hand));
        board.appendChild(row);
      });
      const pile = el("div", "pile", "discard pile (" + t.discards + "): ");
      pile.appendChild(cards(t.discard));
      pile.appendChild(el("span", "stock", " · stock " + t.stock + " · upcard "));
      pile.appendChild(card(t.upcard));
      pile.appendChild(el("span", "limit", " · knock " + (t.knock_limit ? "at " + t.knock_limit : "gin only") + (t.doubled ? " · doubled" : "")));
      board.appendChild(pile);
      result.replaceChildren();
      if (s.type === "hand_end" && s.result) {
        const r = s.result;
        result.appendChild(el("p", "outcome", r.outcome + (r.winner === null ? "" : ": " + name(r.winner) + " scores " + r.points)));
        if (r.knock_discard) { const p = el("p", null, "thrown face down: "); p.appendChild(card(r.knock_discard)); result.appendChild(p); }
        if (r.knocker_layout) result.appendChild(layout(name(r.knocker) + " (knocked)", r.knocker_layout));
        if (r.defender_layout) result.appendChild(layout(name(r.defender) + " (defended)", r.defender_layout));
        result.appendChild(el("p", "scores", "scores: " + r.scores_after.map((v, k) => name(k) + " " + v).join(", ")));
      }
      if (s.type === "game_end" && s.final) {
        result.appendChild(el("p", "outcome", "final: " + s.final.scores.map((v, k) => name(k) + " " + v).join(", ")));
      }
      log.replaceChildren();
      for (let k = Math.max(0, at - 7); k <= at; k++) log.appendChild(el("li", k === at ? "now" : null, steps[k].text));
    }
    document.getElementById("first").addEventListener("click", () => show(0));
    document.getElementById("prev").addEventListener("click", () => show(at - 1));
    document.getElementById("next").addEventListener("click", () => show(at + 1));
    document.getElementById("last").addEventListener("click", () => show(steps.length - 1));
    document.addEventListener("keydown", function (ev) {
      if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: steps.length - 1 }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      show(to);
    });
    viewer.dataset.steps = String(steps.length);
    show(0);
  }

  function start() {
    for (const c of document.querySelectorAll("canvas.chart")) drawChart(c);
    startViewer();
    startLive();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
