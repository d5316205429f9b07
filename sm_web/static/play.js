// The play page: one person against two agents (three with a four-player rule set). The server keeps the game; this page only draws what it is sent
// (the human seat's view) and posts the person's clicks. Agents' moves are fetched one at a time, at a readable pace.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  let game = null;      // the last state received
  let busy = false;     // a request is in flight
  let pausedForHand = false;
  let handOver = null;  // the summary of the hand just over: its table at its end and its log, shown while paused
  let timer = null;
  let players = {};     // seats of each preset (from /api/options)

  function setStatus(status) { document.body.dataset.status = status; }

  function showError(message) {
    const box = $("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    const response = await fetch(path, init);
    const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    return data;
  }

  function draw() {
    $("intro").hidden = !!game;
    $("game").hidden = !game;
    if (!game) { setStatus("idle"); return; }
    // While "Hand N is over" is open, the table and the log are that hand's at its end, not the next deal's.
    const ended = pausedForHand && handOver && handOver.table ? handOver : null;
    const live = !pausedForHand && game.your_turn;
    $("prompt").textContent = ended ? `Hand ${ended.number} is over.` : game.prompt;
    SM.render($("table"), ended ? ended.table : game, { onCard: live ? act : null });
    const choices = $("choices");
    choices.replaceChildren(...(live ? game.choices : []).map((c) =>
      SM.el("button", { type: "button", dataset: { action: c.action }, onclick: () => act(c.action) }, choiceLabel(c))));
    $("log").replaceChildren(...(ended ? ended.log : game.log).map((line) => SM.el("li", {}, line)));
    $("download").hidden = !game.finished;
    $("watch").hidden = !game.finished;
    $("stop").hidden = game.finished;
    $("seed-note").textContent = game.seed_text !== null ? `seed ${game.seed_text}` : "";  // 128 bits, unrounded
    if (pausedForHand) setStatus("hand-over");
    else if (game.finished) setStatus("over");
    else setStatus(game.your_turn ? "your-turn" : "waiting");
    showHint();
  }

  // Hints (the toggle): on your turn, the shipped policy's probability and the search's value of each legal move, asked of
  // the server (GET /api/hint, built from your seat's view only) and written on the cards and the choice buttons.
  function updates() { return document.body.dataset.updates || "0"; }

  async function showHint() {
    const note = $("hint-note");
    if (!$("hints").checked || !game || !game.your_turn || game.finished || pausedForHand) { note.hidden = true; return; }
    const asked = updates();
    try {
      const data = await api("GET", "/api/hint");
      if (asked === updates() && $("hints").checked) drawHint(data.hint);
    } catch (err) { note.textContent = `No hint: ${err.message}`; note.hidden = false; }
  }

  function drawHint(hint) {
    const values = hint.moves.map((m) => m.value).filter((v) => v !== null);
    const best = values.length ? Math.max(...values) : null;
    for (const m of hint.moves) {
      const parts = [];
      if (m.probability !== null) parts.push(`${Math.round(m.probability * 100)}%`);
      if (m.value !== null) parts.push(`${m.value >= 0 ? "+" : ""}${m.value.toFixed(2)}`);
      if (!parts.length) continue;
      const targets = document.querySelectorAll(`#my-hand [data-card="${m.text}"], #choices [data-action="${m.action}"]`);
      for (const t of targets) t.append(SM.el("small", { class: `hint${m.value !== null && m.value === best ? " best" : ""}` }, parts.join(" \u00b7 ")));
    }
    $("my-hand")?.classList.add("hinted");
    $("hint-note").textContent = hint.note;  // written by the server (sm_web.words.hint_note)
    $("hint-note").hidden = false;
    document.body.dataset.hints = String(hint.moves.length);  // for tests: how many moves the hint shows
  }

  function choiceLabel(choice) {
    const m = /^(trump|call) (clubs|diamonds|hearts|spades)$/.exec(choice.label);
    if (m) { const letter = m[2][0].toUpperCase(); return `${SM.SUITS[letter]} ${m[1] === "call" ? "call " : ""}${m[2]}`; }
    return choice.label;
  }

  // The Pace menu starts at the server's pace (serve --pace): its own entry when it is none of the menu's.
  function showPace(seconds) {
    const menu = $("pace");
    let entry = [...menu.options].find((o) => Number(o.value) === seconds);
    if (!entry) {
      entry = SM.el("option", { value: String(seconds), title: "serve --pace" }, `${seconds} s`);
      menu.prepend(entry);
    }
    menu.value = entry.value;
  }

  // The seat menu and the opponents' fields follow the chosen rule set's number of players; watching (no seat)
  // takes one agent per seat.
  function fitSeats() {
    const form = $("new-game");
    const n = players[form.rules.value] || 3;
    const four = form.seat.querySelector("option[value='3']");
    four.hidden = four.disabled = n < 4;
    const watch = form.seat.value === "watch";
    if (!watch && Number(form.seat.value) >= n) form.seat.value = "0";
    const fields = watch ? n : n - 1;
    form.opp3.hidden = fields < 3;
    form.opp4.hidden = fields < 4;
    $("agents-label").textContent = watch ? "Agents" : "Opponents";
  }

  function showHandOver(summary) {
    pausedForHand = true;
    handOver = summary;
    $("hand-over-title").textContent = summary.passed_out ? `Deal ${summary.number}: everybody passed` : `Hand ${summary.number} is over`;
    const body = $("hand-over-body");
    const trick = summary.last_trick;
    body.replaceChildren(
      ...summary.lines.map((line) => SM.el("p", {}, line)),
      trick ? SM.el("p", { class: "last-trick" }, "Last trick: ", ...trick.cards.map((pc) =>
        SM.el("span", { class: "played" }, SM.card(pc.card, { small: true }), ` ${game.players[pc.seat].name}`)),
        ` won by ${game.players[trick.winner].name}`) : "",
      summary.passed_out ? "" : SM.el("p", {}, "Scores: " + summary.scores.map((s, i) => `${game.players[i].name} ${s > 0 ? "+" : ""}${s}`).join(", ")),
      SM.el("p", {}, SM.el("b", {}, summary.after)));
    $("hand-over").hidden = false;
    $("continue").textContent = game.finished ? "See the table" : "Next hand";
  }

  function received(data) {
    game = data.game;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    if (data.event && data.event.hand_over) showHandOver(data.event.hand_over);
    draw();
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    if (!game || game.finished || game.your_turn || busy || pausedForHand) return;
    const wait = Number($("pace").value) * 1000;   // the Pace menu: seconds between two agent moves
    timer = setTimeout(step, wait);
  }

  // Requests go one at a time. A click on a card while one is in flight is ignored; "stop" and "new game" wait.
  let queue = Promise.resolve();
  function run(work, wait = false) {
    if (busy && !wait) return Promise.resolve();
    const next = queue.then(async () => {
      busy = true;
      try { showError(""); await work(); } catch (err) { showError(err.message); } finally { busy = false; }
    });
    queue = next;
    return next;
  }

  function step() { run(async () => received(await api("POST", "/api/step"))).then(schedule); }
  function act(action) { run(async () => received(await api("POST", "/api/act", { action }))).then(schedule); }

  async function newGame(event) {
    if (event) event.preventDefault();
    const form = $("new-game");
    const seedText = form.seed.value.trim();
    const opponents = [form.opp1.value.trim(), form.opp2.value.trim(), form.opp3.value.trim(), form.opp4.value.trim()];
    const n = players[form.rules.value] || 3;
    const seed = seedText === "" ? null : Number(seedText);
    const body = form.seat.value === "watch"
      ? { watch: true, agents: opponents.slice(0, n), rules: form.rules.value, seed }
      : { seat: Number(form.seat.value), opponents: opponents.slice(0, n - 1), rules: form.rules.value, seed };
    if (seedText !== "" && !/^\d+$/.test(seedText)) { showError("The seed must be a whole number (or empty for a random deal)."); return; }
    if (seed !== null && !Number.isSafeInteger(seed)) {   // a page's numbers are exact only up to 2**53 - 1
      showError(`The seed must be at most ${Number.MAX_SAFE_INTEGER} on this page (or empty for a random deal).`); return;
    }
    pausedForHand = false;
    handOver = null;
    $("hand-over").hidden = true;
    clearTimeout(timer);
    await run(async () => received(await api("POST", "/api/new", body)), true);
    schedule();
  }

  async function start() {
    try {
      const options = await api("GET", "/api/options");
      showPace(options.pace);
      const form = $("new-game");
      const rules = options.rules || "standard";
      form.rules.replaceChildren(...options.presets.map((p) => SM.el("option", { value: p, selected: p === rules }, p)));
      $("agent-kinds").replaceChildren(...options.agents.map((a) => SM.el("option", { value: a })));
      form.opp1.value = options.opponents[0];
      form.opp2.value = options.opponents[1];
      form.opp3.value = options.opponents[1];
      form.opp4.value = options.opponents[1];
      players = options.players || {};
      if (options.seed !== null && options.seed !== undefined) form.seed.value = String(options.seed);   // serve --seed
      if (options.watch) {   // serve --watch: the form is set to watch those agents
        form.seat.value = "watch";
        options.watch.forEach((spec, i) => { form[`opp${i + 1}`].value = spec; });
      }
      fitSeats();
      const data = await api("GET", "/api/state");   // a reload resumes the game in progress
      game = data.game;
      draw();
      schedule();
      if (!game && options.watch) await newGame();   // ... and with no game in progress, their game starts
    } catch (err) { showError(err.message); setStatus("idle"); }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("new-game").addEventListener("submit", newGame);
    $("new-game").rules.addEventListener("change", fitSeats);
    $("new-game").seat.addEventListener("change", fitSeats);
    $("continue").addEventListener("click", () => { pausedForHand = false; handOver = null; $("hand-over").hidden = true; draw(); schedule(); });
    $("stop").addEventListener("click", () => { clearTimeout(timer); run(async () => received(await api("POST", "/api/stop")), true); });
    $("pace").addEventListener("change", schedule);
    $("hints").addEventListener("change", draw);
    start();
  });
})();
