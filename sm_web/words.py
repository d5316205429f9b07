"""Plain words for the page: what to do now, how a hand and a game ended.

Every text here is built from a :class:`~sm_env.core.knowledge.PlayerView` (what
the human's seat may know) or from public results of a finished hand
(tricks won, quotas, balances, scores), never from hidden cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sm_env.core.cards import CARD_TEXT, NUM_CARDS, SUIT_NAMES, texts
from sm_env.core.game import (
    ASSIGN,
    ASSIGN_ACTION_BASE,
    BID,
    BID_ACTION_BASE,
    DISCARD,
    EXCHANGE,
    MIZ_ACTION,
    NT_ACTION,
    OVER,
    PASS_ACTION,
    PLAY,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    Game,
    action_text,
    assignment_of,
    role_names,
)
from sm_env.display.scene import phase_name, sorted_cards

_DOING = {
    EXCHANGE: "choosing cards to exchange",
    TRUMP: "naming trump",
    DISCARD: "discarding",
    PLAY: "playing",
    ASSIGN: "assigning the quotas",
    TAKE: "deciding on the face-up card",
    BID: "bidding",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _role(view: Any, seat: int) -> str:
    return role_names(view.rules)[view.role(seat)]


def _quotas_text(by_role: Sequence[int], dealer: int, viewer: int | None, names: Sequence[str]) -> str:
    """``you 8 (dealer), player_1 3 (eldest), player_2 5 (middle)``: quotas by role, said by seat (the auction
    and the dealer's assignment, the two uses, are of three players only)."""
    roles = ("dealer", "eldest", "middle")
    n = len(by_role)
    parts = []
    for role in range(n):
        seat = (dealer + role) % n
        parts.append(f"{'you' if seat == viewer else names[seat]} {by_role[role]} ({roles[role]})")
    return ", ".join(parts)


def choice_label(view: Any, action: int, names: Sequence[str]) -> str:
    """The words on the button of a choice (not a card) that ``view``'s player may make now.

    Trump and calls (``call clubs``, ``call no trump (NT)``, ``call misère (Miz)``), bids and the pass, the
    decline of the face-up card, and a quota assignment said seat by seat.
    """
    if view.phase == TAKE and action == PASS_ACTION:
        return f"Decline the face-up {CARD_TEXT[view.face_up]}"
    if view.phase == BID and action == PASS_ACTION:
        return "Pass"
    if view.phase == BID and action >= BID_ACTION_BASE:
        return f"Bid {action - BID_ACTION_BASE + 8}"
    if view.phase == ASSIGN and action >= ASSIGN_ACTION_BASE:
        return _quotas_text(assignment_of(action, view.rules), view.dealer, view.seat, names)
    if view.phase == TRUMP and view.rules.calls:
        if action == NT_ACTION:
            return "call no trump (NT)"
        if action == MIZ_ACTION:
            return "call misère (Miz)"
        return f"call {SUIT_NAMES[action - TRUMP_ACTION_BASE]}"
    return action_text(action, view.rules)


def prompt(view: Any, names: Sequence[str]) -> str:
    """What the seat of ``view`` is asked to do now, or who is acting, in plain words."""
    me = view.seat
    if view.phase == OVER:
        ended = end_text(view.winner, view.truncated, view.hand_number, names, me)
        return f"{ended} {end_rule_text(view.rules)}".strip() if view.winner is not None else ended
    if view.to_act != me:
        who = names[view.to_act]
        if view.phase == BID:  # nobody deals yet: no role
            return f"{who} is bidding in the auction..."
        doing = _DOING.get(view.phase, phase_name(view.phase))
        if view.phase == TRUMP and view.rules.calls:
            doing = "making a call"
        elif view.phase == TAKE:
            doing = f"holds 2D and is deciding whether to take the face-up {CARD_TEXT[view.face_up]}"
            return f"{who} ({_role(view, view.to_act)}) {doing}..."
        return f"{who} ({_role(view, view.to_act)}) is {doing}..."
    if view.phase == ASSIGN:
        return (
            f"You deal this hand: give the quotas {'-'.join(map(str, view.rules.quotas))} to the dealer (you), "
            "the eldest and the middle, in the order you choose, with one of the buttons. The eldest still leads."
        )
    if view.phase == BID:
        high = view.auction_high
        above = "8 to 16" if high is None else f"more than {names[high[1]]}'s {high[0]}, up to 16"
        return (
            f"Auction: bid how many tricks you will take as dealer of the first hand ({above}), or pass. "
            "The highest bidder deals hand 1 with the bid as its quota; a player who passes does not bid again."
        )
    quota = view.quotas[me]
    if view.phase == TAKE:
        card = CARD_TEXT[view.face_up]
        return (
            f"You hold 2D: you may take the face-up {card} into your hand. To take it, click the card of your "
            f"hand you put face down out of play (2D included; only you will know it); or press Decline."
        )
    if view.phase == EXCHANGE:
        parts = [f"{_plural(n, 'card')} to send to {names[r]}" for r, n in view.to_send if n > 0]
        up = view.previous_balances[me] if view.previous_balances is not None else 0
        return (
            f"Exchange: you took {up} more trick{'s' if up != 1 else ''} than your quota last hand, so you give "
            f"cards away. Choose {' and then '.join(parts)}. For each card you send, the receiver must give you "
            "back its highest card of that suit."
        )
    if view.phase == TRUMP and view.rules.calls:
        return (
            f"You deal this hand (quota {quota}). Make a call you have not made yet: a trump suit, no trump (NT) or "
            f"misère (Miz: the quotas become maxima, and every trick over yours counts against you)."
        )
    if view.phase == TRUMP:
        return (
            f"You deal this hand (quota {quota}). Name the trump suit; you have not seen the "
            f"{_plural(view.rules.kitty_size, 'card')} of the kitty yet."
            if view.rules.kitty_size and not view.kitty_taken
            else f"You deal this hand (quota {quota}). Name the trump suit."
        )
    if view.phase == DISCARD:
        left = view.rules.kitty_size - len(view.discards or ())
        after = "" if view.kitty_taken else " Then you take the kitty."
        return f"Discard {_plural(left, 'more card')} face down: they are out of play.{after}"
    if view.phase == PLAY:
        number = view.tricks_played + 1
        if view.maxima is not None:
            need = f"misère: you have {_plural(view.tricks_won[me], 'trick')} and may take at most {view.maxima[me]}"
        else:
            need = f"you have {view.tricks_won[me]} of your quota of {quota}"
        if not view.trick:
            return f"Trick {number}: your lead, play any card ({need})."
        suit = SUIT_NAMES[view.led_suit]
        follow = view.hand & (0x1FFF << (13 * view.led_suit))
        if follow:
            return f"Trick {number}: follow {suit}; only {suit} can be played ({need})."
        wins = "a trump wins the trick" if view.trump >= 0 else f"with no trump only {suit} can win the trick"
        return f"Trick {number}: you have no {suit}, so any card may be played; {wins} ({need})."
    return f"Your turn ({phase_name(view.phase)}): choose one of the buttons."


def news(before: Any, after: Any, names: Sequence[str]) -> list[str]:
    """What one seat learns between two of its views of the same hand, as sentences.

    Exchanges whose cards moved (what was sent and returned, where the seat
    took part; only the count for the third player, when the exchange ends),
    the kitty taken (its cards if the seat is the dealer), kitty cards
    shown to the seat and the end of the auction (who deals hand 1, the
    quotas). Built from the two views only.
    """
    me = after.seat

    def who(seat: int) -> str:
        return "you" if seat == me else names[seat]

    lines = []
    for i, e in enumerate(after.exchanges):
        was = before.exchanges[i] if i < len(before.exchanges) else None
        if e.returned is not None and (was is None or was.returned is None):
            lines.append(
                f"Exchange: {who(e.sender)} sent {' '.join(texts(e.sent))} to {who(e.receiver)}, who gave back "
                f"{' '.join(texts(e.returned))}"
            )
        elif e.receiver == me and e.sent is not None and e.returned is None and (was is None or was.sent is None):
            lines.append(
                f"Exchange: {names[e.sender]} sent you {' '.join(texts(e.sent))}; you give back your highest card "
                "of each suit sent after trump is named"
            )
    if before.exchange_pending and not after.exchange_pending:
        for e in after.exchanges:
            if e.sent is None:
                lines.append(
                    f"Exchange: {names[e.sender]} gave {_plural(e.count, 'card')} to {names[e.receiver]} "
                    "and got as many back"
                )
    if after.kitty_taken and not before.kitty_taken:
        if after.kitty is not None:
            lines.append(f"You take the kitty: {' '.join(sorted_cards(after.kitty))}")
        else:
            lines.append(f"{names[after.dealer]} takes the kitty")
    if before.phase == BID and after.phase != BID and after.auction_high is not None:
        bid, dealer = after.auction_high
        by_role = [after.quotas[(dealer + r) % len(after.quotas)] for r in range(len(after.quotas))]
        lines.append(
            f"{'You win' if dealer == me else names[dealer] + ' wins'} the auction with {bid} and "
            f"{'deal' if dealer == me else 'deals'} hand 1: quotas {_quotas_text(by_role, dealer, me, names)}"
        )
    if after.shown and not before.shown:
        lines.append(
            "Show rule: the dealer must show you these kitty cards, higher than the lowest card it gave back to "
            f"you in their suit: {' '.join(sorted_cards(after.shown))}"
        )
    return lines


def end_text(winner: Any, truncated: bool, hands: int, names: Sequence[str], me: int | None = None) -> str:
    """How the game ended."""
    if winner is not None:
        seats = winner if isinstance(winner, list) else [winner]
        who = " and ".join("you" if s == me else names[s] for s in seats)
        verb = "win" if who == "you" else "won"
        return f"Game over after {_plural(hands, 'hand')}: {who} {verb}."
    if truncated:
        return f"Game over: stopped after {_plural(hands, 'hand')} with no winner (the hand limit)."
    return "Game stopped."


def hint_note(hint: dict[str, Any]) -> str:
    """The line under a hint (:meth:`agents.advice.Advice.to_json`): what its figures are, with the search's
    samples and seed (written in full: a page's numbers hold 53 bits, a seed up to 128), then each of its notes
    as a sentence of its own, capitalised: "... (20 samples, seed 16). The only legal action: nothing to
    compare."."""
    search = hint["search"]
    text = (
        f"Hint: % = the shipped policy ({hint['policy'] or 'none'}); \u00b1 = {search['search']}'s value in tricks "
        f"of balance ({search['samples']} samples, seed {search['seed']})."
    )
    for note in (hint["policy_note"], hint["search_note"]):
        if note:
            text += f" {note[:1].upper()}{note[1:]}{'' if note.endswith('.') else '.'}"
    return text


def end_rule_text(rules: Any) -> str:
    """The rule set's end conditions in words (a description, not a decision: the engine decides)."""
    parts = []
    if getattr(rules, "win_tricks", None):
        parts.append(f"a player takes {rules.win_tricks} or more tricks in one hand")
    if getattr(rules, "win_margin", None):
        parts.append(f"a player takes {rules.win_margin} or more tricks over its quota in one hand")
    if getattr(rules, "target_score", None):
        minus = f" (or -{rules.target_score})" if getattr(rules, "target_symmetric", False) else ""
        parts.append(f"a running score reaches {rules.target_score}{minus}")
    if getattr(rules, "dealer_makes_quota", None) == "up":
        parts.append("the dealer takes more than its quota (from the third hand on)")
    elif getattr(rules, "dealer_makes_quota", None):
        parts.append("the dealer makes its quota (from the third hand on)")
    if getattr(rules, "fixed_hands", None):
        parts.append(f"{rules.fixed_hands} hands have been played (the highest score wins)")
    return "The game ends when " + "; or when ".join(parts) + "." if parts else ""


def trick_json(trick: Any, n: int) -> dict[str, Any]:
    """A trick of a hand log as the page draws it: ``{"leader", "cards": [{"seat", "card"}], "winner"}``."""
    cards = [{"seat": (trick.leader + i) % n, "card": CARD_TEXT[c]} for i, c in enumerate(trick.cards)]
    return {"leader": trick.leader, "cards": cards, "winner": trick.winner}


def hand_summary(game: Game, number: int, names: Sequence[str], me: int | None) -> dict[str, Any]:
    """The public result of finished hand ``number``: tricks, quotas (a misère hand's maxima), balances, scores
    and its last trick; for a deal passed out in the auction, that nobody bid (``passed_out`` true, quotas,
    tricks and balances null, scores unchanged).

    Only public facts: nothing of the deal, the kitty or the discards.
    """
    log = game.history[number - 1]
    n = game.rules.num_players
    if log.passed_out:
        if game.is_over:
            after = end_text(game.winner, game.truncated, number, names, me)
        else:
            after = f"The cards are dealt again and {names[game.auction_first]} bids first."
        return {
            "number": number,
            "passed_out": True,
            "quotas": None,
            "tricks_won": None,
            "balances": None,
            "scores": list(game.scores),  # the auction comes before hand 1: nothing scored yet
            "chips": None,
            "last_trick": None,
            "lines": ["Everybody passed in the auction: nobody deals this deal and nothing is scored."],
            "after": after,
        }
    roles = role_names(game.rules)
    lines = []
    for s in range(n):
        who = "You" if s == me else names[s]
        against = f"a maximum of {log.maxima[s]} (misère)" if log.maxima is not None else f"a quota of {log.quotas[s]}"
        lines.append(
            f"{who} ({roles[(s - log.dealer) % n]}) took {_plural(log.tricks_won[s], 'trick')} "
            f"against {against}: {log.balances[s]:+d}"
            + (f", chips {log.chips[s]:+d}." if log.chips is not None else ".")
        )
    last = log.tricks[-1] if log.tricks else None
    up = [s for s in range(n) if log.balances[s] > 0]
    if game.is_over:
        after = end_text(game.winner, game.truncated, number, names, me)
        if game.winner is not None:
            after = f"{after} {end_rule_text(game.rules)}".strip()
    elif up and not game.rules.no_exchange:
        after = (
            "Next hand: "
            + " and ".join("you" if s == me else names[s] for s in up)
            + " took more than the quota and will give cards to those who took fewer, receiving their best cards "
            "of the same suits."
        )
    elif game.rules.no_exchange:
        after = "Next hand: these rules have no exchange."
    else:
        after = "Next hand: nobody is up, so there is no exchange."
    return {
        "number": number,
        "passed_out": False,
        "quotas": list(log.quotas),
        "tricks_won": list(log.tricks_won),
        "balances": list(log.balances),
        "scores": list(log.scores),
        "chips": None if log.chips is None else list(log.chips),
        "last_trick": None if last is None else trick_json(last, n),
        "lines": lines,
        "after": after,
    }


def describe_action(
    seat: int,
    phase: int,
    action: int,
    viewer: int | None,
    names: Sequence[str],
    receiver: int | None = None,
    *,
    rules: Any = None,
    face_up: int = -1,
) -> str:
    """Plain words for one action, as ``viewer`` may see it (None: every hand is shown).

    ``receiver`` is the seat a card is sent to in the exchange; ``rules`` says a call from a trump and the
    quotas of an assignment; ``face_up`` is the face-up card of ``one_card_kitty`` (public). The card put out
    of play to take it is named only to its player, as are the cards sent and discarded.
    """
    who = names[seat]
    mine = viewer is None or viewer == seat
    calls = rules is not None and rules.calls
    if phase == PLAY:
        return f"{who} played {CARD_TEXT[action]}"
    if phase == TRUMP and action == NT_ACTION:
        return f"{who} called no trump (NT)"
    if phase == TRUMP and action == MIZ_ACTION:
        return f"{who} called misère (Miz): the quotas become maxima"
    if phase == TRUMP and TRUMP_ACTION_BASE <= action < TRUMP_ACTION_BASE + 4:
        suit = SUIT_NAMES[action - TRUMP_ACTION_BASE]
        return f"{who} called {suit} (trump)" if calls else f"{who} named {suit} trump"
    if phase == BID:
        return f"{who} passed" if action == PASS_ACTION else f"{who} bid {action - BID_ACTION_BASE + 8}"
    if phase == ASSIGN and rules is not None and action >= ASSIGN_ACTION_BASE:
        return f"{who} gave the quotas: {_quotas_text(assignment_of(action, rules), seat, viewer, names)}"
    if phase == TAKE:
        card = f" {CARD_TEXT[face_up]}" if face_up >= 0 else " card"
        if action == PASS_ACTION:
            return f"{who} declined the face-up{card}"
        out = CARD_TEXT[action] if mine else "a card"
        return f"{who} took the face-up{card} and put {out} face down out of play"
    if phase == EXCHANGE:
        to = "" if receiver is None else f" to {'you' if receiver == viewer else names[receiver]}"
        return f"{who} chose {CARD_TEXT[action] if mine else 'a card'} to send{to}"
    if phase == DISCARD:
        return f"{who} discarded {CARD_TEXT[action] if mine else 'a card'} face down"
    if action < NUM_CARDS:  # a card in a phase this module does not know: named only to its owner
        return f"{who} chose {CARD_TEXT[action] if mine else 'a card'} ({phase_name(phase)})"
    return f"{who}: {action_text(action, rules)}"
