"""Text rendering of the table: one player's view, or the whole table.

:func:`render_table` draws either

- a **player's view** (a :class:`~sm_env.core.knowledge.PlayerView`, or a game
  and a seat, which goes through :func:`~sm_env.core.knowledge.player_view`, so a
  player's picture never shows more than that player may know), or
- the **whole table** (a game and no seat: every hand, the kitty and the
  discards), for debugging and spectating.

Layout of a player's view (one line each, in this order; lines that do not
apply are left out), here player_0 in hand 3::

    Sergeant Major [standard]  hand 3  phase: play  trump: H (hearts)
      seat      role    quota  tricks  score  cards
      player_0  eldest      5       3     +2     12  <- you, to act
      player_1  dealer      8       5     -1     11
      player_2  middle      3       2     -1     11
    Previous hand balances: player_0 +2, player_1 -1, player_2 -1
    Exchange: player_0 -> player_1 2 cards: sent 3C 4D, returned AC KD
    Exchange: player_0 -> player_2 1 card
    Kitty: taken by the dealer (player_1)
    Shown to you (the dealer took them): AD
    Last trick: player_1 AS, player_2 3S, player_0 KS -> player_1
    Trick 9 (led by player_2): player_2 TH, player_0 ?, player_1 ?
    player_0 hand (12): S: A K 9  H: Q 7 2  D: J  C: 8 6 5 4 3
    To act: player_0 (play) - legal: QH 7H 2H

An exchange shows its cards only to its sender and receiver (the receiver
once the round is complete); the dealer sees ``Kitty (taken): ...`` and
``Your discards: ...``; with ``kitty_trick`` a line ``Kitty trick: the
dealer's discards, won by player_1`` follows the discards (public). Once the game is over, ``Last hand: balances ...``
(with the ``chips`` option followed by ``; chips ...``, the hand's chip
changes) and ``Game over: ...`` replace the ``To act`` line. The whole table (marked
``(whole table)`` in the header) shows every exchange in full, the kitty's
cards, the discards, the shown cards and all three hands. With four players
(``players: 4``) the seat table, tricks and hands have four seats, with the
roles dealer, eldest, third, fourth.

In the exchange the line reads ``To act: player_0 (exchange: choose 1 card
for player_2, then 2 cards for player_1)``; naming trump it lists the
action ids (``52=clubs 53=diamonds 54=hearts 55=spades``); assigning the
quotas (``dealer_assigns_quotas``) too (``68=8-5-3 69=8-3-5 ...``, for
dealer, eldest, middle), and the quota column shows ``?`` until then.
With ``one_card_kitty`` a line ``Face-up card: 7C (the holder of 2D may take
it after trump)`` (later ``taken by player_2`` or ``declined by player_2``;
``2D: nobody can take it``) is public; the taker also sees ``You put out of
play: 4S``, the whole table ``put out 4S``; deciding, the line reads ``To
act: player_2 (take the face-up card 7C: put out a card, or 58=decline)``.
With ``calls`` a public line ``Calls left: player_0 C D NT Miz, ...`` is
drawn, and once the call is made ``Call: NT (no trump)`` or ``Call: Miz
(misère): maxima player_0 3, player_1 5, player_2 8`` (the header's trump
is then ``not named``); naming the call, the legal list reads ``52=clubs ...
56=NT 57=Miz``.
With ``auction`` a public line ``Auction: player_0 9, player_1 pass, ...``
(followed by ``; 2 deals passed out`` after pass-outs; the line stays
through hand 1) is drawn; during the auction the role column shows ``-``,
there is no kitty line, and the line to act
reads ``To act: player_1 (bid) - legal: 58=pass 61=10 ... 67=16``.

Hands are grouped by suit, spades first, high cards first. Roles and quotas
are those of the current hand; scores are running scores (chip totals with
the ``chips`` option).
"""

from __future__ import annotations

from sm_env.core.cards import (
    CARD_TEXT,
    RANK_LETTERS,
    SUIT_LETTERS,
    SUIT_MASK,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    from_mask,
    mask_text,
)
from sm_env.core.game import (
    ASSIGN,
    BID,
    CALL_NAMES,
    DISCARD,
    EXCHANGE,
    FOUR_ROLE_NAMES,
    MIZ,
    NT,
    OVER,
    PASS_ACTION,
    PHASE_NAMES,
    PLAY,
    ROLE_NAMES,
    TAKE,
    TRUMP,
    TWO_OF_DIAMONDS,
    Game,
    action_text,
    chip_changes,
    result_text,
)
from sm_env.core.knowledge import PlayerView, player_view

__all__ = ["hand_text", "render_table"]


def _name(seat: int) -> str:
    return f"player_{seat}"


def hand_text(mask: int, unicode_suits: bool = False) -> str:
    """A set of cards grouped by suit, spades first, high first: ``S: A K 9  H: Q 7 2  D: -  C: 8``."""
    groups = []
    for suit in (3, 2, 1, 0):
        cards = from_mask(mask & SUIT_MASK[suit])
        ranks = " ".join(RANK_LETTERS[c % 13] for c in reversed(cards)) or "-"
        label = SUIT_SYMBOLS[suit] if unicode_suits else SUIT_LETTERS[suit]
        groups.append(f"{label}: {ranks}")
    return "  ".join(groups)


def _cards(cards: list[int] | tuple[int, ...] | None) -> str:
    return " ".join(CARD_TEXT[c] for c in cards) if cards else "-"


def render_table(source: PlayerView | Game, seat: int | None = None, *, unicode_suits: bool = False) -> str:
    """The table as text.

    Args:
        source: a PlayerView (that player's picture), or a Game.
        seat: with a Game, draw that seat's view (through ``player_view``);
            None draws the whole table (every hand, kitty, discards).
        unicode_suits: write suits as symbols in the hands (display only).
    """
    if isinstance(source, PlayerView):
        if seat is not None and seat != source.seat:
            raise ValueError(f"the view is seat {source.seat}'s; cannot draw it for seat {seat}")
        return _render_view(source, unicode_suits)
    if isinstance(source, Game):
        if seat is None:
            return _render_spectator(source, unicode_suits)
        if seat not in range(source.rules.num_players):
            raise ValueError(
                f"seat must be 0-{source.rules.num_players - 1} (or None for the whole table), got {seat!r}"
            )
        return _render_view(player_view(source, seat), unicode_suits)
    raise TypeError(f"render_table needs a PlayerView or a Game, got {type(source).__name__}")


# ---------------------------------------------------------------------- shared parts


def _header(rules_name: str, hand_number: int, phase: int, trump: int) -> str:
    trump_text = f"{SUIT_LETTERS[trump]} ({SUIT_NAMES[trump]})" if trump >= 0 else "not named"
    return f"Sergeant Major [{rules_name}]  hand {hand_number}  phase: {PHASE_NAMES[phase]}  trump: {trump_text}"


def _seat_table(
    dealer: int | None, quotas, tricks_won, scores, hand_sizes, to_act: int | None, viewer: int | None
) -> list[str]:
    """The seats' table; ``dealer`` None while the auction decides it (roles ``-``)."""
    lines = ["  seat      role    quota  tricks  score  cards"]
    n = len(hand_sizes)
    names = ROLE_NAMES if n == 3 else FOUR_ROLE_NAMES
    for s in range(n):
        marks = []
        if s == viewer:
            marks.append("you")
        if s == to_act:
            marks.append("to act")
        note = f"  <- {', '.join(marks)}" if marks else ""
        role = "-" if dealer is None else names[(s - dealer) % n]
        quota = "?" if quotas is None else quotas[s]  # the dealer has still to assign them
        lines.append(
            f"  {_name(s):<8}  {role:<6}  {quota:>5}  {tricks_won[s]:>6}  {scores[s]:>+5}  {hand_sizes[s]:>5}{note}"
        )
    return lines


def _trick_lines(tricks, phase: int, trick_cards, trick_leader: int, n: int = 3) -> list[str]:
    """The last completed trick and the open one (public); ``n`` players."""
    lines = []
    done = [t for t in tricks if t.winner is not None]
    if done:
        last = done[-1]
        plays = ", ".join(f"{_name((last.leader + i) % n)} {CARD_TEXT[c]}" for i, c in enumerate(last.cards))
        lines.append(f"Last trick: {plays} -> {_name(last.winner)}")
    if phase == PLAY:
        plays = []
        for i in range(n):
            who = _name((trick_leader + i) % n)
            plays.append(f"{who} {CARD_TEXT[trick_cards[i]] if i < len(trick_cards) else '?'}")
        lines.append(f"Trick {len(done) + 1} (led by {_name(trick_leader)}): {', '.join(plays)}")
    return lines


def _to_act_line(
    phase: int,
    to_act: int,
    dealer: int,
    legal: int | None,
    to_send,
    discards_left: int | None,
    rules=None,
    face_up: int = -1,
) -> str:
    if phase == ASSIGN:
        what = "assign the quotas to dealer, eldest, middle"
    elif phase == BID:
        what = "bid"
    elif phase == TAKE:
        what = f"take the face-up card {CARD_TEXT[face_up]}: put out a card, or {PASS_ACTION}=decline"
    elif phase == EXCHANGE:
        parts = [f"{n} card{'s' if n != 1 else ''} for {_name(r)}" for r, n in to_send if n > 0]
        what = "exchange: choose " + (", then ".join(parts) if parts else "the cards to send")
    elif phase == TRUMP:
        what = "name trump"
    elif phase == DISCARD:
        what = "discard" + (f": {discards_left} more" if discards_left is not None else "")
    else:
        what = "play"
    line = f"To act: {_name(to_act)} ({what})"
    if legal and phase == TRUMP:
        names = ("clubs", "diamonds", "hearts", "spades", "NT", "Miz")
        line += " - legal: " + " ".join(f"{a}={names[a - 52]}" for a in from_mask(legal))
    elif legal and phase == ASSIGN:
        line += " - legal: " + " ".join(f"{a}={action_text(a, rules)[7:]}" for a in from_mask(legal))
    elif legal and phase == BID:
        line += " - legal: " + " ".join(f"{a}={action_text(a).removeprefix('bid ')}" for a in from_mask(legal))
    elif legal and phase == TAKE:
        cards = legal & ~(1 << PASS_ACTION)
        line += " - legal: " + " ".join(CARD_TEXT[a] for a in reversed(from_mask(cards))) + f" {PASS_ACTION}=decline"
    elif legal:
        line += " - legal: " + " ".join(CARD_TEXT[a] for a in reversed(from_mask(legal)))
    return line


def _end_line(winner, truncated: bool, hand_number: int) -> str:
    if winner is None and not truncated:
        return "Game over"
    return "Game over: " + result_text(winner, truncated, hand_number, _name)


def _result_line(quotas, tricks_won, chips: bool) -> str:
    balances = [tricks_won[s] - quotas[s] for s in range(len(quotas))]
    line = "Last hand: balances " + ", ".join(f"{_name(s)} {b:+d}" for s, b in enumerate(balances))
    if chips:
        line += "; chips " + ", ".join(f"{_name(s)} {c:+d}" for s, c in enumerate(chip_changes(balances)))
    return line


def _kitty_trick_line(rules, discard_count: int, dealer: int) -> list[str]:
    """With ``kitty_trick``, once the four discards are made: they are the dealer's first trick (public)."""
    if rules.kitty_trick and discard_count == rules.kitty_size:
        return [f"Kitty trick: the dealer's discards, won by {_name(dealer)}"]
    return []


def _face_up_lines(face_up: int, take, put_out: int | None, whole: bool) -> list[str]:
    """With ``one_card_kitty``: the face-up card and what became of it (public); the card put out of play to
    the taker (``put_out``) or the whole table."""
    if face_up < 0:
        return []
    card = CARD_TEXT[face_up]
    if take is None:
        if face_up == TWO_OF_DIAMONDS:
            return [f"Face-up card: {card}: nobody can take it"]
        return [f"Face-up card: {card} (the holder of 2D may take it after trump)"]
    seat, taken = take
    if not taken:
        return [f"Face-up card: {card}, declined by {_name(seat)}"]
    line = f"Face-up card: {card}, taken by {_name(seat)}"
    if put_out is not None:
        return (
            [line + f", put out {CARD_TEXT[put_out]}"]
            if whole
            else [line, f"You put out of play: {CARD_TEXT[put_out]}"]
        )
    return [line]


def _auction_lines(rules, hand_number: int, passed_out: int, bids) -> list[str]:
    """With ``auction``, up to the end of hand 1: the bids of the auction (public)."""
    if not rules.auction or hand_number > passed_out + 1:
        return []
    text = ", ".join(f"{_name(s)} {'pass' if b is None else b}" for s, b in bids) or "no bid yet"
    if passed_out:
        text += f"; {passed_out} deal{'s' if passed_out != 1 else ''} passed out"
    return [f"Auction: {text}"]


def _call_lines(rules, call: int, maxima, calls_left) -> list[str]:
    """With ``calls``: the calls each seat has still to make and this hand's call (public)."""
    if not rules.calls:
        return []
    left = ", ".join(
        f"{_name(s)} {' '.join(CALL_NAMES[k] for k in range(6) if calls_left[s] >> k & 1) or '-'}" for s in range(3)
    )
    lines = [f"Calls left: {left}"]
    if call == NT:
        lines.append("Call: NT (no trump)")
    elif call == MIZ:
        lines.append("Call: Miz (misère): maxima " + ", ".join(f"{_name(s)} {maxima[s]}" for s in range(3)))
    return lines


def _balances_line(previous_balances) -> list[str]:
    if previous_balances is None:
        return []
    return ["Previous hand balances: " + ", ".join(f"{_name(s)} {b:+d}" for s, b in enumerate(previous_balances))]


# ---------------------------------------------------------------------- a player's view


def _render_view(view: PlayerView, unicode_suits: bool) -> str:
    me = view.seat
    lines = [_header(view.rules.name, view.hand_number, view.phase, view.trump)]
    dealer = None if view.phase == BID else view.dealer
    lines += _seat_table(dealer, view.quotas, view.tricks_won, view.scores, view.hand_sizes, view.to_act, me)
    lines += _auction_lines(view.rules, view.hand_number, view.passed_out, view.auction_bids)
    lines += _call_lines(view.rules, view.call, view.maxima, view.calls_left)
    lines += _balances_line(view.previous_balances)
    for ex in view.exchanges:
        text = f"Exchange: {_name(ex.sender)} -> {_name(ex.receiver)} {ex.count} card{'s' if ex.count != 1 else ''}"
        if ex.sent is not None:
            text += f": sent {_cards(ex.sent)}"
            text += ", returned " + (_cards(ex.returned) if ex.returned is not None else "(not yet)")
        lines.append(text)
    if view.phase not in (OVER, BID) and view.rules.kitty_size:
        dealer_name = _name(view.dealer)
        if view.kitty is not None:
            lines.append(f"Kitty (taken): {mask_text(view.kitty)}")
        else:
            lines.append(f"Kitty: {'taken by' if view.kitty_taken else 'face down, for'} the dealer ({dealer_name})")
    if view.discards is not None and view.discards:
        lines.append(f"Your discards: {_cards(view.discards)}")
    lines += _kitty_trick_line(view.rules, view.discard_count, view.dealer)
    lines += _face_up_lines(view.face_up, view.take, view.put_out, False)
    if view.shown:
        lines.append(f"Shown to you (the dealer took them): {mask_text(view.shown)}")
    lines += _trick_lines(view.tricks(), view.phase, view.trick, view.trick_leader, len(view.hand_sizes))
    lines.append(f"{_name(me)} hand ({view.hand.bit_count()}): {hand_text(view.hand, unicode_suits)}")
    if view.phase == OVER:
        lines.append(_result_line(view.quotas, view.tricks_won, view.rules.chips))
        lines.append(_end_line(view.winner, view.truncated, view.hand_number))
    else:
        discards_left = None
        if view.phase == DISCARD and view.discards is not None:
            discards_left = view.rules.kitty_size - len(view.discards)
        lines.append(
            _to_act_line(
                view.phase,
                view.to_act,
                view.dealer,
                view.legal if view.to_act == me else 0,
                view.to_send,
                discards_left,
                view.rules,
                view.face_up,
            )
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------- the whole table


def _render_spectator(game: Game, unicode_suits: bool) -> str:
    log = game.history[-1]
    phase = game.phase
    to_act = game.current_player
    hands = game.hands
    sizes = tuple(h.bit_count() for h in hands)
    lines = [_header(game.rules.name, game.hand_number, phase, game.trump) + "  (whole table)"]
    dealer = None if phase == BID else game.dealer
    lines += _seat_table(dealer, game.quotas, game.tricks_won, game.scores, sizes, to_act, None)
    lines += _auction_lines(game.rules, game.hand_number, game.passed_out, game.auction_bids)
    lines += _call_lines(game.rules, game.call, game.maxima, game.calls_left)
    lines += _balances_line(game.previous_balances)
    for ex in log.exchanges:
        returned = _cards(ex.returned) if ex.returned is not None else "(not yet)"
        lines.append(
            f"Exchange: {_name(ex.sender)} -> {_name(ex.receiver)} {ex.count} card{'s' if ex.count != 1 else ''}: "
            f"sent {_cards(ex.sent)}, returned {returned}"
        )
    if game.rules.kitty_size:
        state = "taken" if game.picked_up else "face down"
        lines.append(f"Kitty ({state}): {_cards(sorted(log.kitty, reverse=True))}")
    if log.discards:
        lines.append(f"Discards ({_name(game.dealer)}): {_cards(log.discards)}")
    lines += _kitty_trick_line(game.rules, len(log.discards or ()), game.dealer)
    take = game.take
    lines += _face_up_lines(
        game.face_up,
        None if take is None else (take[0], take[1] is not None),
        None if take is None else take[1],
        True,
    )
    for to, cards in log.shown or ():
        lines.append(f"Shown to {_name(to)}: {_cards(cards)}")
    trick_cards = game.trick if phase == PLAY else []
    lines += _trick_lines(log.tricks or (), phase, trick_cards, game.leader, len(hands))
    for s in range(len(hands)):
        lines.append(f"{_name(s)} hand ({sizes[s]}): {hand_text(hands[s], unicode_suits)}")
    if phase == OVER:
        lines.append(_result_line(game.quotas, game.tricks_won, game.rules.chips))
        lines.append(_end_line(game.winner, game.truncated, game.hand_number))
    else:
        discards_left = game.rules.kitty_size - len(log.discards) if phase == DISCARD else None
        lines.append(
            _to_act_line(
                phase,
                to_act,
                game.dealer,
                game.legal_mask(),
                game.cards_to_send(),
                discards_left,
                game.rules,
                game.face_up,
            )
        )
    return "\n".join(lines)
