"""Helpers for the web tests: what a seat may know, computed from the game itself (not from player_view)."""

from __future__ import annotations

import json
import re
from typing import Any

from sm_env.core.cards import CARD_TEXT, from_mask
from sm_env.core.game import TAKE, TWO_OF_DIAMONDS, Game

CARD_PATTERN = re.compile(r"\b([2-9TJQKA][CDHS])\b")


def cards_in(data: Any) -> set[str]:
    """Every card text in a JSON payload (or an HTML string)."""
    text = data if isinstance(data, str) else json.dumps(data)
    return set(CARD_PATTERN.findall(text))


def known_cards(game: Game, seat: int, number: int | None = None) -> set[str]:
    """The cards of the current hand (or of finished hand ``number``, at its end) that ``seat`` may know, by the
    rule book, read from the engine's state.

    Its hand; every card played this hand; in the exchange what it sent (at
    once) and what came back, or as receiver both once the round is done; as
    dealer its discards and, once taken, the kitty; cards shown to it; with
    a one-card kitty the face-up card (public), 2D once its holder is asked
    (who decides is public) and the card put out of play, by its player only
    (docs/rules.md 10.5).
    """
    current = number is None or number == game.hand_number and not game.is_over
    log = game.history[-1 if number is None else number - 1]
    known = set(from_mask(game.hands[seat])) if current else set()  # a hand over: every card played
    dealer = game.dealer if current else log.dealer
    for trick in log.tricks or ():
        known.update(trick.cards)
    for e in log.exchanges:
        if seat == e.sender:
            known.update(e.sent)
            known.update(e.returned or ())
        elif seat == e.receiver and e.returned is not None:
            known.update(e.sent)
            known.update(e.returned)
    if seat == dealer:
        known.update(log.discards or ())
        if game.picked_up or not current:
            known.update(log.kitty)
    for to, cards in log.shown or ():
        if to == seat:
            known.update(cards)
    if game.rules.one_card_kitty:
        known.update(log.kitty)  # the face-up card
        if current and game.phase == TAKE or log.take is not None:
            known.add(TWO_OF_DIAMONDS)
        if log.take is not None and log.take[0] == seat and log.take[1] is not None:
            known.add(log.take[1])
    return {CARD_TEXT[c] for c in known}


def played_cards(game: Game, hand_number: int) -> set[str]:
    """The cards played to tricks in one hand (public once played)."""
    return {CARD_TEXT[c] for t in game.history[hand_number - 1].tricks or () for c in t.cards}


# ---------------------------------------------------------------------- checks run in the record checks' process
# (sent there by name: tests put them in place of sm_web.app.check_record)


def slow_check_record(release: str, source: Any) -> Any:
    """:func:`sm_web.app.check_record` once the file ``release`` exists (waiting at most 30 s): a check as slow as
    a test wants. It writes ``release + ".checking"`` when it starts waiting."""
    import os
    import time

    from sm_web.app import check_record

    with open(release + ".checking", "w"):
        pass
    deadline = time.monotonic() + 30
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.01)
    return check_record(source)


def failing_check_record(source: Any) -> Any:
    """A check with a bug in it."""
    raise RuntimeError("a bug")


def ending_check_record(source: Any) -> Any:
    """A check whose process ends in the middle of it."""
    import os

    os._exit(3)
