// The replay viewer: load a record, then step forward and back through every action, with every hand shown or only
// what one seat could know. Frames are drawn by the server from the re-played game (sm_web/replays.py).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  let info = null;   // {steps, hand_starts, ...} of the loaded record
  let step = 0;
  let auto = null;
  let frameNow = null;  // the frame drawn last
  let analyses = {};    // hand number -> its analysis, for the settings in analysedWith
  let analysedWith = "";
  let storedWith = null;  // the settings of the analysis read from a file (view RECORD --analysis FILE), if any

  function showError(message) { $("error").textContent = message || ""; $("error").hidden = !message; }

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = body; }
    const response = await fetch(path, init);
    const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    return data;
  }

  // Load a record; `name` (the file's, or where it came from) is shown beside the file picker once it loads.
  async function load(text, name) {
    showError("");
    try {
      info = await api("POST", "/api/replay", text);
      $("file-name").textContent = `showing ${name}`;
      analyses = {}; analysedWith = ""; storedWith = null; drawTable();
      $("viewer").hidden = false;
      $("empty").hidden = true;
      $("slider").max = info.steps;
      const four = $("view").querySelector("option[value='3']");  // a four-player record has a seat 3
      four.hidden = four.disabled = info.players !== 4;
      if (four.disabled && $("view").value === "3") $("view").value = "all";
      await go(0);
      if (info.stored_analysis) await showStored();
    } catch (err) { showError(err.message); }
  }

  function settingsOf(form) {
    return { samples: Number(form.samples.value), seed: Number(form.seed.value), threshold: Number(form.threshold.value) };
  }

  // The analysis the server read from a file with the record: shown as the hands analysed on request are, its
  // settings put in the form (so "Analyse this hand" with them adds another hand to the same table).
  async function showStored() {
    const data = await api("GET", "/api/replay/stored-analysis");
    const form = $("analyse");
    const first = data.analyses[0];
    form.samples.value = first.search.samples;
    form.seed.value = first.search.seed;
    form.threshold.value = first.threshold;
    analysedWith = storedWith = JSON.stringify(settingsOf(form));
    analyses = {};
    for (const analysis of data.analyses) analyses[analysis.hands[0]] = analysis;
    drawTable();
    drawCost();
    document.body.dataset.analysis = String(Object.keys(analyses).length);
  }

  async function go(target) {
    if (!info) return;
    step = Math.max(0, Math.min(info.steps, target));
    try {
      const frame = await api("GET", `/api/replay/frame?step=${step}&view=${$("view").value}`);
      draw(frame);
    } catch (err) { showError(err.message); }
  }

  function draw(frame) {
    $("slider").value = frame.step;
    $("position").textContent = `action ${frame.step} of ${frame.steps} \u00b7 hand ${frame.hand_number}`;
    const event = frame.event;
    $("event").textContent = caption(frame, event);
    $("marks").replaceChildren(...(event ? event.marks : []).map((m) => SM.el("li", { class: `mark-${m.kind}` }, m.text)));
    SM.render($("table"), frame, {});
    frameNow = frame;
    drawCost();
    document.body.dataset.status = "ready";
    document.body.dataset.step = String(frame.step);
  }

  // What the step shows: the last action, or at a hand's start its deal (and how the hand before ended).
  function caption(frame, event) {
    if (frame.result) return frame.result;
    if (!event) return `The deal of hand ${frame.hand_number}. Step forward to see the first action.`;
    if (event.hand !== frame.hand_number) {
      return `The deal of hand ${frame.hand_number}. Step forward to see its first action. (Hand ${event.hand} ended: ${event.text}.)`;
    }
    return `Hand ${event.hand}: ${event.text}`;
  }

  // The analysis of the move this frame shows (seen from the seat chosen in "Show": another seat's moves are
  // not told then), and the per-seat table of the hands analysed.
  function drawCost() {
    const box = $("move-cost");
    const event = frameNow && frameNow.event;
    const analysis = event && analyses[event.hand];
    const d = analysis && analysis.decisions.find((x) => x.step === frameNow.step);
    const view = $("view").value;
    if (!d || (view !== "all" && Number(view) !== d.seat)) { box.hidden = true; return; }
    const f = (v) => (v >= 0 ? "+" : "") + v.toFixed(2);
    box.replaceChildren(d.cost === null ? `player_${d.seat} ${d.move}: not scored (${d.note})` :
      SM.el("span", { class: d.flagged ? "flagged" : null }, `player_${d.seat} ${d.move} (${f(d.value)}); ` +
        `best ${d.best.join(" ")} (${f(d.best_value)}): cost ${d.cost.toFixed(2)}${d.flagged ? " \u2014 flagged" : ""}`));
    box.hidden = false;
  }

  function drawTable() {
    const hands = Object.keys(analyses).map(Number).sort((a, b) => a - b);
    if (!hands.length) { $("analysis-table").hidden = true; return; }
    const first = analyses[hands[0]];
    const s = first.search;
    $("analysis-note").textContent = `Hands analysed: ${hands.join(", ")}; ${s.search} (${s.rollouts} rollouts), ` +
      `${s.samples} samples per decision, seed ${s.seed}; flagged: cost above ${first.threshold} tricks.` +
      (analysedWith === storedWith ? ` Hands ${info.stored_analysis.hands.join("-")} come from the analysis file the viewer ` +
        "was started with (not searched again)." : "");
    const rows = first.seats.map((r) => ({ seat: r.seat, decisions: 0, scored: 0, flagged: 0, total: 0 }));
    for (const h of hands) for (const r of analyses[h].seats) {
      const row = rows[r.seat];
      row.decisions += r.decisions; row.scored += r.scored; row.flagged += r.flagged; row.total += r.total_cost;
    }
    const flaggedMoves = hands.flatMap((h) => analyses[h].decisions.filter((d) => d.flagged));
    $("analysis-table").replaceChildren(
      SM.el("tr", {}, ["seat", "decisions", "scored", "flagged", "total cost", "mean cost"].map((t) => SM.el("th", {}, t))),
      ...rows.map((r) => SM.el("tr", { dataset: { seat: r.seat } }, SM.el("td", {}, `player_${r.seat}`), SM.el("td", {}, r.decisions),
        SM.el("td", {}, r.scored), SM.el("td", {}, r.flagged), SM.el("td", {}, r.total.toFixed(2)),
        SM.el("td", {}, r.scored ? (r.total / r.scored).toFixed(3) : "-"))),
      ...flaggedMoves.map((d) => SM.el("tr", { class: "flagged" }, SM.el("td", { colspan: 6 },
        SM.el("a", { href: "#", onclick: (e) => { e.preventDefault(); go(d.step); } },
          `hand ${d.hand}, ${d.where}: player_${d.seat} ${d.move}, best ${d.best.join(" ")}, cost ${d.cost.toFixed(2)}`)))));
    $("analysis-table").hidden = false;
  }

  async function analyseHand(event) {
    event.preventDefault();
    if (!frameNow) return;
    const form = $("analyse");
    const settings = settingsOf(form);
    const key = JSON.stringify(settings);
    if (key !== analysedWith) { analyses = {}; analysedWith = key; }
    $("analysis-note").textContent = `Analysing hand ${frameNow.hand_number}\u2026`;
    document.body.dataset.analysis = "busy";
    try {
      const analysis = await api("POST", "/api/replay/analysis", JSON.stringify({ hand: frameNow.hand_number, ...settings }));
      analyses[analysis.hands[0]] = analysis;
      drawTable();
      drawCost();
    } catch (err) { showError(err.message); $("analysis-note").textContent = ""; }
    document.body.dataset.analysis = String(Object.keys(analyses).length);
  }

  function handStart(direction) {
    const starts = info.hand_starts;
    if (direction < 0) return [...starts].reverse().find((s) => s < step) ?? 0;
    return starts.find((s) => s > step) ?? info.steps;
  }

  function toggleAuto() {
    if (auto) { clearInterval(auto); auto = null; $("auto").textContent = "Play"; return; }
    $("auto").textContent = "Pause";
    auto = setInterval(() => { if (step >= info.steps) toggleAuto(); else go(step + 1); }, 700);
  }

  document.addEventListener("DOMContentLoaded", async () => {
    $("file").addEventListener("change", async () => { const f = $("file").files[0]; if (f) load(await f.text(), f.name); });
    $("view").addEventListener("change", () => go(step));
    $("first").addEventListener("click", () => go(0));
    $("last").addEventListener("click", () => go(info.steps));
    $("back").addEventListener("click", () => go(step - 1));
    $("forward").addEventListener("click", () => go(step + 1));
    $("prev-hand").addEventListener("click", () => go(handStart(-1)));
    $("next-hand").addEventListener("click", () => go(handStart(1)));
    $("auto").addEventListener("click", toggleAuto);
    $("analyse").addEventListener("submit", analyseHand);
    $("slider").addEventListener("input", () => go(Number($("slider").value)));
    document.addEventListener("keydown", (e) => {
      if (!info || e.target.tagName === "INPUT" && e.target.type !== "range") return;
      if (e.key === "ArrowRight") go(step + 1); else if (e.key === "ArrowLeft") go(step - 1);
    });
    const from = new URLSearchParams(location.search).get("from");
    if (from === "game") await load(JSON.stringify({ from_game: true }), "the game just played");
    else {
      const options = await api("GET", "/api/options").catch(() => ({}));
      if (options.preloaded) {
        const name = options.preloaded_name || "the record";
        await load(JSON.stringify({ preloaded: true }), `${name} (given on the command line)`);
      }
    }
    if (!info) document.body.dataset.status = "empty";
  });
})();
