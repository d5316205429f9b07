"""sm_env.core.logs: the shared log types of a hand (immutable views, mutable engine logs, copies)."""

from __future__ import annotations

import pytest

from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.core.logs import NO_SUIT, Exchange, ExchangeLog, HandLog, HandRecord, Trick, TrickLog


def test_no_suit_is_the_one_value_for_no_trump_yet():
    game = Game("standard", seed=3)
    assert game.log.trump == NO_SUIT == -1
    assert all(player_view(game, s).trump == NO_SUIT for s in range(3))


def test_immutable_types_compare_by_value_and_cannot_change():
    assert Trick(0, (1, 2, 3), 2) == Trick(0, (1, 2, 3), 2) != Trick(0, (1, 2, 3), 1)
    exchange = Exchange(0, 1, 2, (5, 6), None)
    assert exchange.sent == (5, 6) and exchange.returned is None
    with pytest.raises(AttributeError):
        exchange.count = 3  # type: ignore[misc]


def test_trick_log_freezes_as_it_stands():
    log = TrickLog(leader=2)
    log.cards += [10, 11]
    frozen = log.frozen()
    log.cards.append(12)
    log.winner = 1
    assert frozen == Trick(2, (10, 11), None)
    assert log.frozen() == Trick(2, (10, 11, 12), 1)


def test_copies_do_not_share_what_grows():
    exchange = ExchangeLog(0, 1, 2)
    exchange.sent += [3, 4]
    copy = exchange.copy()
    exchange.sent.append(5)
    exchange.returned = [7]
    assert copy.sent == [3, 4] and copy.returned is None
    hand = HandLog(1, 0, [8, 5, 3], [[0], [1], [2]], [3])
    hand.exchanges.append(exchange)
    hand.discards = [9]
    hand.tricks = [TrickLog(0)]
    other = hand.copy()
    hand.exchanges[0].sent.append(6)
    hand.discards.append(10)
    hand.tricks[0].cards.append(1)
    assert other.exchanges[0].sent == [3, 4, 5] and other.discards == [9] and other.tricks[0].cards == []
    assert other.trump == NO_SUIT and other.quotas == [8, 5, 3]


def test_a_played_hand_logs_every_trick_with_its_winner():
    game = Game("standard", seed=11)
    while not game.is_over and len(game.history) == 1:
        legal = game.legal_mask()
        game.apply((legal & -legal).bit_length() - 1)
    hand = game.history[0]
    assert len(hand.tricks) == 16 and all(t.winner in (0, 1, 2) for t in hand.tricks)
    assert sum(hand.tricks_won) == 16 and sum(hand.balances) == 0
    assert all(len(t.cards) == 3 for t in hand.tricks)


def test_hand_log_freezes_as_it_stands_open_trick_included():
    hand = HandLog(1, 0, [8, 5, 3], [[0], [1], [2]], [3])
    exchange = ExchangeLog(0, 1, 2)
    exchange.sent += [4, 5]
    hand.exchanges.append(exchange)
    hand.tricks = [TrickLog(2)]
    frozen = hand.frozen()
    exchange.returned = [6, 7]
    hand.tricks[0].cards.append(9)
    hand.quotas.append(0)
    assert isinstance(frozen, HandRecord) and frozen.quotas == (8, 5, 3)
    assert frozen.exchanges == (Exchange(0, 1, 2, (4, 5), None),) and frozen.tricks == (Trick(2, (), None),)
    assert frozen.deal_hands == ((0,), (1,), (2,)) and frozen.kitty == (3,) and frozen.trump == NO_SUIT
    assert frozen.discards is frozen.shown is frozen.scores is frozen.chips is None
    assert hand.frozen().exchanges[0].returned == (6, 7) and hand.frozen().tricks[0].cards == (9,)


def test_hand_record_has_every_field_of_hand_log():
    assert set(HandRecord._fields) == set(HandLog.__slots__)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"auction": True}, "auction"),
        ({"calls": True}, "maxima"),
        ({"one_card_kitty": True}, "take"),
        ({"players": 4}, ""),
    ],
    ids=["auction", "calls", "one_card_kitty", "four"],
)
def test_frozen_hands_carry_the_section_10_fields(options, field):
    import random

    from sm_env.core.game import OVER
    from sm_env.core.rules import RuleSet

    rules = RuleSet(**options)
    rng = random.Random(3)
    seen = 0
    for seed in range(8):
        game = Game(rules=rules, seed=seed)
        while game.phase != OVER and len(game.history) < 4:
            game.apply(rng.choice(game.legal_actions()))
        for log in game.history:
            frozen = log.frozen()
            for name in ("take", "auction", "maxima", "quotas", "tricks_won", "balances", "scores"):
                value = getattr(log, name)
                assert getattr(frozen, name) == (None if value is None else tuple(value)), name
            assert (frozen.dealer, frozen.passed_out, frozen.call) == (log.dealer, log.passed_out, log.call)
            assert len(frozen.deal_hands) == rules.num_players
            seen += bool(getattr(frozen, field)) if field else frozen.scores is not None and len(frozen.scores) == 4
    assert seen  # the option's field was filled at least once
