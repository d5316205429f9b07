// Draws a table payload (see sm_web/tables.py) into an element. Shared by the play page and the replay viewer.
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
    const bal = p.tricks - p.quota;
    const box = el("div", { class: `seat seat-${where}${acting ? " acting" : ""}`, dataset: { seat } },
      el("h3", {}, p.name, " ", el("span", { class: "note" }, `\u00b7 ${p.role}`), acting ? " \u2190 to act" : ""),
      el("div", { class: "stats" }, "quota ", el("b", {}, p.quota), " \u00b7 tricks ", el("b", {}, p.tricks),
        ` (${bal >= 0 ? "+" : ""}${bal})`, " \u00b7 score ", el("b", {}, (p.score > 0 ? "+" : "") + p.score),
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

  function render(target, table, opts = {}) {
    const me = table.seat === null || table.seat === undefined ? (opts.bottom ?? 0) : table.seat;
    const names = table.players.map((p) => p.seat === table.seat ? "you" : `player_${p.seat}`);
    const trump = table.trump ? el("span", { class: table.trump === "H" || table.trump === "D" ? "red" : null },
      `${SUITS[table.trump]} ${SUIT_NAMES[table.trump]}`) : "not named yet";
    const closed = table.tricks.filter((t) => t.winner !== null);
    const last = closed.length ? closed[closed.length - 1] : null;
    const center = el("div", { class: "center" },
      el("div", { class: "trump" }, `Hand ${table.hand_number} \u00b7 trump: `, trump),
      el("div", { class: "note" }, `${table.rules} rules \u00b7 phase: ${table.phase} \u00b7 tricks played: ${closed.length}`),
      table.trick ? trickView(table.trick, names, `Trick ${table.trick.number}, led by ${names[table.trick.leader]}`) : null,
      last ? trickView(last, names, `Last trick (${last.number}): won by ${names[last.winner]}`) : null);
    const side = el("div", { class: "side" });
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
    const grid = el("div", { class: "table-grid" },
      seatBox(table, (me + 1) % 3, "left", opts), center, seatBox(table, (me + 2) % 3, "right", opts),
      seatBox(table, me, "me", opts), side);
    target.replaceChildren(grid);
  }

  return { el, card, render, SUITS, SUIT_NAMES };
})();
