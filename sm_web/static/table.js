// Draws a table payload (see sm_env/display/scene.py) into an element. Shared by the play page and the replay viewer.
// Three seats (you at the bottom, the next seat clockwise on the left, the last on the right) or four (left, across,
// right); the face-up card, the auction and the calls where the rule set has them.
"use strict";
const SM = (() => {
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANKS = { T: "10" };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function card(text, opts = {}) {
    const rank = RANKS[text[0]] || text[0];
    const suit = text[1];
    const red = suit === "H" || suit === "D";
    const cls = "card" + (red ? " red" : "") + (opts.small ? " small" : "");
    const label = `${rank} of ${SUIT_NAMES[suit]}`;
    const tag = opts.onclick !== undefined ? "button" : "span";
    return el(tag, { class: cls, title: label, "aria-label": label, dataset: { card: text },
      type: tag === "button" ? "button" : null, disabled: opts.disabled, onclick: opts.onclick },
      el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUITS[suit]));
  }

  function backs(n) {
    return Array.from({ length: n }, () => el("span", { class: "card back small", "aria-hidden": "true" }));
  }

  function cardList(cards) {
    return cards && cards.length ? el("span", { class: "cards" }, cards.map((c) => card(c, { small: true }))) : "none";
  }

  function seatBox(table, seat, where, opts) {
    const p = table.players[seat];
    const hand = table.hands[seat];
    const acting = table.to_act === seat && !table.over && !table.finished;  // finished: also a stopped game
    const limit = p.maximum !== null && p.maximum !== undefined;  // a misère hand: the quota is a maximum
    const target = limit ? p.maximum : p.quota;
    const known = target !== null && target !== undefined;  // no quota yet: the auction, or the dealer assigns them
    const bal = limit ? p.maximum - p.tricks : p.tricks - p.quota;
    const box = el("div", { class: `seat seat-${where}${acting ? " acting" : ""}`, dataset: { seat } },
      el("h3", {}, p.name, " ", p.role ? el("span", { class: "note" }, `\u00b7 ${p.role}`) : "", acting ? " \u2190 to act" : ""),
      el("div", { class: "stats" }, limit ? "at most " : "quota ", el("b", {}, known ? target : "\u2013"),
        " \u00b7 tricks ", el("b", {}, p.tricks), known ? ` (${bal >= 0 ? "+" : ""}${bal})` : "",
        " \u00b7 score ", el("b", {}, (p.score > 0 ? "+" : "") + p.score),
        " \u00b7 cards ", p.cards, p.voids.length ? ` \u00b7 void in ${p.voids.map((s) => SUITS[s]).join(" ")}` : ""));
    if (hand) {
      const legal = new Set(table.legal || []);
      const clickable = opts.onCard && seat === table.seat;
      box.append(el("div", { class: "cards hand", id: seat === table.seat ? "my-hand" : null },
        hand.map((c) => clickable ? card(c, { disabled: !legal.has(c), onclick: () => opts.onCard(c) }) : card(c))));
    } else {
      box.append(el("div", { class: "cards backs" }, backs(p.cards)));
    }
    return box;
  }

  function trickView(trick, names, title) {
    if (!trick) return null;
    return el("div", {}, el("div", { class: "note" }, title),
      el("div", { class: "trick" }, trick.cards.map((pc) =>
        el("figure", { class: trick.winner === pc.seat ? "won" : null }, card(pc.card), el("figcaption", {}, names[pc.seat])))));
  }

  // Where each seat sits, from the bottom one clockwise.
  function places(n) { return n === 4 ? ["me", "left", "across", "right"] : ["me", "left", "right"]; }

  function trumpText(table) {
    const call = table.call && table.call.call;
    if (call === "NT") return "none (no trump call)";
    if (call === "Miz") return "none (misère call)";
    if (!table.trump) return "not named yet";
    return el("span", { class: table.trump === "H" || table.trump === "D" ? "red" : null },
      `${SUITS[table.trump]} ${SUIT_NAMES[table.trump]}`);
  }

  function faceUpView(table, names) {
    const f = table.face_up;
    if (!f) return null;
    const you = f.decider === table.seat;
    let what;
    if (f.nobody) what = "(the two of diamonds): nobody can take it";
    else if (f.taken === true) what = `taken by ${names[f.decider]} (for a card put face down out of play)`;
    else if (f.taken === false) what = `declined by ${names[f.decider]}`;
    else if (f.decider !== null) what = you ? "you hold the two of diamonds and decide" : `${names[f.decider]} holds the two of diamonds and decides`;
    else what = "the holder of the two of diamonds may take it after trump is named";
    return el("div", { class: "face-up", id: "face-up" }, "Face-up card: ", card(f.card, { small: true }), ` ${what}`,
      f.put_out ? el("div", {}, "Put out of play: ", card(f.put_out, { small: true }),
        table.seat === null || table.seat === undefined ? "" : " (only you know it)") : null);
  }

  function auctionView(table, names) {
    const a = table.auction;
    if (!a || !a.open) return null;
    const bids = a.bids.map((b) => `${names[b.seat]} ${b.bid === null ? "passed" : "bid " + b.bid}`);
    const head = a.passed_out ? `Auction (${a.passed_out} deal${a.passed_out === 1 ? "" : "s"} passed out): ` : "Auction: ";
    let result = "";
    if (a.hand1_quotas && a.high) result = ` \u2192 ${names[a.high.seat]} deals hand 1 with ${a.high.bid}`;
    else if (a.high) result = ` (highest: ${names[a.high.seat]} ${a.high.bid})`;
    return el("div", { class: "auction", id: "auction" }, head,
      bids.length ? bids.join(", ") : `${names[a.first]} bids first`, result);
  }

  function callsView(table, names) {
    const c = table.call;
    if (!c) return null;
    return el("div", { class: "calls", id: "calls" },
      c.call ? `Call: ${c.call}${c.maxima ? " (the quotas are maxima)" : ""}` : "Call: not made yet",
      el("div", { class: "note" }, "Calls left: " + c.calls_left.map((l, s) => `${names[s]} ${l.join(" ") || "none"}`).join("; ")));
  }

  function render(target, table, opts = {}) {
    const n = table.players.length;
    const me = table.seat === null || table.seat === undefined ? (opts.bottom ?? 0) : table.seat;
    const names = table.players.map((p) => p.seat === table.seat ? "you" : `player_${p.seat}`);
    const closed = table.tricks.filter((t) => t.winner !== null);
    const last = closed.length ? closed[closed.length - 1] : null;
    const center = el("div", { class: "center" },
      el("div", { class: "trump" }, `Hand ${table.hand_number} \u00b7 trump: `, trumpText(table)),
      el("div", { class: "note" }, `${table.rules} rules \u00b7 phase: ${table.phase} \u00b7 tricks played: ${closed.length}`),
      auctionView(table, names), faceUpView(table, names),
      table.trick ? trickView(table.trick, names, `Trick ${table.trick.number}, led by ${names[table.trick.leader]}`) : null,
      last ? trickView(last, names, `Last trick (${last.number}): won by ${names[last.winner]}`) : null);
    const side = el("div", { class: "side" });
    const calls = callsView(table, names);
    if (calls) side.append(calls);
    if (table.previous_balances) side.append(el("div", {}, "Last hand's balances: " +
      table.previous_balances.map((b, s) => `${names[s]} ${b >= 0 ? "+" : ""}${b}`).join(", ")));
    for (const ex of table.exchanges) {
      const line = el("div", { class: "exchange" }, `Exchange: ${names[ex.from]} \u2192 ${names[ex.to]}, ${ex.count} card${ex.count === 1 ? "" : "s"}`);
      if (ex.sent) line.append(el("div", {}, "sent ", cardList(ex.sent)), el("div", {}, "returned ", ex.returned ? cardList(ex.returned) : "(not yet)"));
      side.append(line);
    }
    if (table.to_send && table.to_send.length) side.append(el("div", {}, "Still to choose: " +
      table.to_send.map((t) => `${t.count} for ${names[t.to]}`).join(", ")));
    if (table.kitty_size) {
      side.append(el("div", {}, `Kitty (${table.kitty_size} cards): `, table.kitty ? cardList(table.kitty) :
        (table.kitty_taken ? `taken by the dealer (${names[table.dealer]})` : "face down")));
      side.append(el("div", {}, `Discards (${table.discard_count}): `, table.discards ? cardList(table.discards) : "face down"));
    }
    for (const s of table.shown) side.append(el("div", { class: "shown" }, `Shown to ${names[s.to]} (show rule): `, cardList(s.cards)));
    const where = places(n);
    const seats = where.map((w, i) => seatBox(table, (me + i) % n, w, opts));
    const grid = el("div", { class: `table-grid${n === 4 ? " four" : ""}` }, ...seats.slice(1), center, seats[0], side);
    target.replaceChildren(grid);
  }

  return { el, card, render, SUITS, SUIT_NAMES };
})();
