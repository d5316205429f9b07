"""Hand-built deals for every rule of docs/rules.md sections 1-8.

Seats are absolute. With ``first_dealer=0`` the dealer is seat 0 (quota 8), the
eldest seat 1 (quota 5, leads the first trick) and the middle seat 2 (quota 3);
in a trick play goes 1 -> 2 -> 0 when seat 1 leads.
"""

from __future__ import annotations

import random

import pytest
from helpers import act, card, cards, highest, history, make_deal, mask, play_hand, snapshot, trump

from sm_env.core.cards import SUIT_MASK, card_text
from sm_env.core.game import (
    DISCARD,
    EXCHANGE,
    NUM_ACTIONS,
    OVER,
    PLAY,
    TRUMP,
    TRUMP_MASK,
    DealError,
    Game,
    GameOverError,
    IllegalActionError,
)

QUOTA_BY_ROLE = {"dealer": 8, "eldest": 5, "middle": 3}

# Trick lab. Dealer 0 holds no hearts and no spades once it has discarded
# 2S-5S and taken the (club/diamond) kitty; seat 2 holds no spades.
DEAL_D = make_deal(
    "S:2345 C:AK2345 D:AK7245",
    "S:6789TJQKA H:A5 C:9TJQ D:J",
    "D:Q39T C:8 H:K4236789TJQ",
    "C:67 D:68",
)
D_DISCARDS = "2S 3S 4S 5S"

# Exchanges.
DEAL_E = make_deal(
    "H:6789TJ S:789TJ C:789TJ",
    "H:235 S:KA34 C:234 D:234567",
    "H:AKQ4 S:Q256 C:AK56 D:89TJ",
    "C:Q D:QKA",
)

# Show rule: the dealer holds KH JH 5H 4H, the kitty AH QH TH AS.
DEAL_S = make_deal(
    "H:KJ54 S:KQ34 C:AKQJ D:AKQJ",
    "H:2367 S:567 C:T987 D:T9876",
    "H:89 S:289TJ C:65432 D:5432",
    "H:AQT S:A",
)

# Dealer 0 names spades, discards 2D-5D, takes 2C-5C and, when everyone plays
# its highest legal card, takes exactly 12 tricks (W12) or 11 (W11):
#  W12: trick 1 seat 1 leads 2S (its highest card), dealer AS wins; the dealer
#       then leads KS..3S (11 more, others void). Seat 1 is left with 6C-9C,
#       seat 2 with JC-AC, which beat the dealer's 2C-5C in tricks 13-16.
#       Tricks [12, 0, 4].
#  W11: seat 1 leads 3S, dealer AS wins, then KS..4S (10 more; seat 1 follows
#       2S once). Then the dealer leads 6C and seat 2 (AC) wins it and every
#       later trick (3H, 2H, KC, QC; the dealer has only low clubs left).
#       Tricks [11, 0, 5].
DEAL_W12 = make_deal(
    "S:3456789TJQKA D:2345",
    "S:2 C:6789T D:6789TJQKA H:2",
    "C:JQKA H:3456789TJQKA",
    "C:2345",
)
DEAL_W11 = make_deal(
    "S:456789TJQKA C:6 D:2345",
    "S:23 C:789TJ D:6789TJQKA",
    "C:QKA H:23456789TJQKA",
    "C:2345",
)
W_SCRIPT = "T:S 2D 3D 4D 5D"


def hand_mask(deal: dict, seat: int) -> int:
    return mask(deal["hands"][seat])


def assert_illegal(game: Game, action, error=IllegalActionError, match: str | None = None) -> None:
    """The action raises and leaves the whole game state exactly as it was."""
    before = snapshot(game)
    with pytest.raises(error, match=match):
        game.apply(action)
    assert snapshot(game) == before


def start_play(deal: dict, trump_suit: str, discards: str = D_DISCARDS, **kw) -> Game:
    game = Game(deals=[deal], first_dealer=kw.pop("first_dealer", 0), **kw)
    act(game, [f"T:{trump_suit}", *discards.split()])
    assert game.phase == PLAY
    return game


def random_play(game: Game, seed: int) -> None:
    rng = random.Random(seed)
    while game.current_player is not None:
        game.apply(rng.choice(game.legal_actions()))


# ---------------------------------------------------------------- 1. seats


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_roles_and_quotas_follow_the_dealer(dealer):
    game = Game(seed=3, first_dealer=dealer)
    eldest, middle = (dealer + 1) % 3, (dealer + 2) % 3
    assert game.dealer == dealer and game.log.dealer == dealer
    expected = [0, 0, 0]
    expected[dealer], expected[eldest], expected[middle] = (
        QUOTA_BY_ROLE["dealer"],
        QUOTA_BY_ROLE["eldest"],
        QUOTA_BY_ROLE["middle"],
    )
    assert game.quotas == expected == game.log.quotas
    assert sum(game.quotas) == 16
    assert [game.role_of(s) for s in (dealer, eldest, middle)] == [0, 1, 2]
    # hand 1: no exchange, the dealer names trump
    assert game.phase == TRUMP and game.current_player == dealer


def test_deal_passes_left_and_quotas_cycle_3_5_8():
    next_quota = {3: 5, 5: 8, 8: 3}
    checked = 0
    for seed in range(20):
        game = Game(seed=seed)
        random_play(game, seed)
        logs = game.history
        for prev, cur in zip(logs, logs[1:], strict=False):
            assert cur.dealer == (prev.dealer + 1) % 3  # the eldest deals next
            assert cur.quotas == [next_quota[q] for q in prev.quotas]
            checked += 1
    assert checked > 50


def test_first_dealer_from_seeded_rng_or_given():
    drawn = {Game(seed=s).first_dealer for s in range(60)}
    assert drawn == {0, 1, 2}
    for s in range(20):
        a, b = Game(seed=s), Game(seed=s)
        assert a.first_dealer == b.first_dealer == a.dealer == a.log.dealer
        for d in range(3):
            assert Game(seed=s, first_dealer=d).dealer == d


@pytest.mark.parametrize("bad", [3, -1, True, "0", 1.0])
def test_bad_first_dealer(bad):
    with pytest.raises(ValueError, match="first_dealer"):
        Game(first_dealer=bad)


# ---------------------------------------------------------------- 3. deal


def test_given_deal_is_used_as_dealt():
    game = Game(deals=[DEAL_E], first_dealer=0)
    assert game.hands == [hand_mask(DEAL_E, s) for s in range(3)]
    assert [sorted(h) for h in game.log.deal_hands] == [sorted(h) for h in DEAL_E["hands"]]
    assert sorted(game.log.kitty) == sorted(DEAL_E["kitty"])


def test_deal_accepts_text_and_ids():
    as_text = {
        "hands": [[card_text(c).lower() for c in h] for h in DEAL_E["hands"]],
        "kitty": [card_text(c) for c in DEAL_E["kitty"]],
    }
    as_text["hands"][0] = ["10" + t[1] if t[0] == "t" else t for t in as_text["hands"][0]]
    assert Game(deals=[as_text], first_dealer=0).hands == Game(deals=[DEAL_E], first_dealer=0).hands


def test_random_deals_partition_the_deck():
    for seed in range(30):
        game = Game(seed=seed)
        log = game.log
        assert [len(h) for h in log.deal_hands] == [16, 16, 16] and len(log.kitty) == 4
        every = [c for h in log.deal_hands for c in h] + list(log.kitty)
        assert sorted(every) == list(range(52))


def test_later_hands_are_dealt_at_random_after_the_given_deals():
    game = Game(seed=1, deals=[DEAL_W11], first_dealer=0)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    assert game.hand_number == 2
    every = [c for h in game.log.deal_hands for c in h] + list(game.log.kitty)
    assert sorted(every) == list(range(52))


@pytest.mark.parametrize(
    ("deal", "needle"),
    [
        ({"hands": DEAL_E["hands"][:2], "kitty": DEAL_E["kitty"]}, "3 hands"),
        ({"hands": [DEAL_E["hands"][0][:15], *DEAL_E["hands"][1:]], "kitty": DEAL_E["kitty"]}, "seat 0 has 15"),
        ({"hands": DEAL_E["hands"], "kitty": DEAL_E["kitty"][:3]}, "kitty has 3"),
        ({"hands": DEAL_E["hands"]}, "kitty has 0"),
        ({"hands": DEAL_E["hands"], "kitty": [*DEAL_E["kitty"], 0]}, "kitty has 5"),
        (
            {
                "hands": [DEAL_E["hands"][0], DEAL_E["hands"][1][:15] + [DEAL_E["hands"][0][0]], DEAL_E["hands"][2]],
                "kitty": DEAL_E["kitty"],
            },
            "6H appears twice",
        ),
        ({"hands": [[*DEAL_E["hands"][0][:15], "XH"], *DEAL_E["hands"][1:]], "kitty": DEAL_E["kitty"]}, "'XH'"),
        ({"hands": [[*DEAL_E["hands"][0][:15], 52], *DEAL_E["hands"][1:]], "kitty": DEAL_E["kitty"]}, "52"),
        ({"hands": ["AS KS", *DEAL_E["hands"][1:]], "kitty": DEAL_E["kitty"]}, "seat 0"),
        ({"hands": DEAL_E["hands"], "kitty": DEAL_E["kitty"], "extra": 1}, "extra"),
        ({"kitty": DEAL_E["kitty"]}, "hands"),
        ("not a deal", "hands"),
    ],
)
def test_bad_deals_raise_deal_error(deal, needle):
    with pytest.raises(DealError) as info:
        Game(deals=[deal])
    message = str(info.value)
    assert needle in message
    assert message.startswith("deals[0]")  # names which deal is wrong


def test_bad_deal_in_later_hand_is_named():
    with pytest.raises(DealError, match=r"deals\[1\]"):
        Game(deals=[DEAL_E, {"hands": DEAL_E["hands"], "kitty": []}])
    with pytest.raises(DealError, match="list of deals"):
        Game(deals=DEAL_E)


# ---------------------------------------------------------------- 5. trump, discards, kitty


def test_trump_then_discards_then_kitty():
    game = Game(deals=[DEAL_D], first_dealer=0)
    dealt = hand_mask(DEAL_D, 0)
    kitty = mask(DEAL_D["kitty"])
    assert game.phase == TRUMP and game.current_player == 0
    assert game.legal_mask() == TRUMP_MASK == sum(1 << a for a in (52, 53, 54, 55))
    assert game.hands[0] == dealt  # the dealer has not seen the kitty
    for c in (card("AC"), card("6C")):
        assert_illegal(game, c)

    game.apply(trump("D"))
    assert game.log.trump == 1 and game.trump == 1
    assert game.phase == DISCARD and game.current_player == 0
    assert game.legal_mask() == dealt  # discards come from the dealt hand only
    assert_illegal(game, card("6C"), match="does not hold 6C")  # a kitty card
    assert_illegal(game, trump("H"))  # trump is named once

    discards = cards(D_DISCARDS)
    for i, c in enumerate(discards):
        game.apply(c)
        assert game.log.discards == discards[: i + 1]
        if i < 3:
            assert game.phase == DISCARD and game.current_player == 0
            assert game.hands[0] & kitty == 0
            assert_illegal(game, c)  # a card is discarded once
    # after the 4th discard the kitty is in the dealer's hand: 16 cards again
    assert game.hands[0] == (dealt & ~mask(discards)) | kitty
    assert game.hands[0].bit_count() == 16
    assert all(h & mask(discards) == 0 for h in game.hands)
    assert game.log.shown == []  # hand 1: no exchange, nothing to show
    assert game.phase == PLAY


# ---------------------------------------------------------------- 6. play


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_eldest_leads_the_first_trick_with_any_card(dealer):
    game = Game(seed=5, first_dealer=dealer)
    game.apply(trump("C"))
    for c in sorted(game.legal_actions())[:4]:
        game.apply(c)
    eldest = (dealer + 1) % 3
    assert game.phase == PLAY and game.current_player == eldest
    assert game.legal_mask() == game.hands[eldest]
    assert game.log.tricks[0].leader == eldest


def test_follow_suit_is_enforced_and_illegal_play_changes_nothing():
    game = start_play(DEAL_D, "D")
    game.apply(card("AH"))
    hearts_2 = hand_mask(DEAL_D, 2) & SUIT_MASK[2]
    assert game.current_player == 2
    assert game.legal_mask() == hearts_2
    assert_illegal(game, card("QD"), match="must follow hearts")  # holds QD but has hearts
    assert_illegal(game, card("8C"))
    assert_illegal(game, card("AS"), match="does not hold AS")
    assert_illegal(game, trump("D"))
    assert_illegal(game, NUM_ACTIONS)
    assert_illegal(game, -1)


def test_worked_example_of_section_6():
    # diamonds trump; A (seat 1) leads AH, B (seat 2) 4H, C (dealer, no hearts) 7D
    game = start_play(DEAL_D, "D")
    act(game, "AH 4H")
    assert game.legal_mask() == game.hands[0]  # void in hearts: any card
    act(game, "7D")
    trick = game.log.tricks[0]
    assert trick.cards == cards("AH 4H 7D") and trick.leader == 1
    assert trick.winner == 0
    assert game.tricks_won == [1, 0, 0]
    # C leads the next trick, with any card
    assert game.current_player == 0 and game.log.tricks[1].leader == 0
    assert game.legal_mask() == game.hands[0]


def test_no_obligation_to_trump():
    game = start_play(DEAL_D, "D")
    act(game, "AH 4H")
    assert game.legal_mask() & mask("C:AK2345") == mask("C:AK2345")
    act(game, "AC")  # the dealer holds trumps but throws a club
    # no trump in the trick: the highest heart wins, not the (higher-ranked) ace of clubs
    assert game.log.tricks[0].winner == 1
    assert game.current_player == 1 and game.log.tricks[1].leader == 1


def test_highest_card_of_led_suit_wins_without_trump():
    game = start_play(DEAL_D, "S")  # spades trump: nobody plays one here
    act(game, "5H KH AC")
    assert game.log.tricks[0].winner == 2
    assert game.current_player == 2 and game.tricks_won == [0, 0, 1]


def test_lowest_trump_beats_the_ace_of_the_led_suit():
    game = start_play(DEAL_D, "C")
    act(game, "AH KH 2C")
    assert game.log.tricks[0].winner == 0


def test_led_suit_is_trump():
    game = start_play(DEAL_D, "H")
    act(game, "5H KH AD")
    assert game.log.tricks[0].winner == 2


def test_higher_trump_wins_and_no_obligation_to_overtrump():
    game = start_play(DEAL_D, "D")
    act(game, "AS 3D")
    assert game.legal_mask() == game.hands[0]
    act(game, "7D")  # overtrumps 3D
    assert game.log.tricks[0].winner == 0

    game = start_play(DEAL_D, "D")
    act(game, "AS QD")
    assert game.hands[0] >> card("AD") & 1  # could overtrump with AD ...
    act(game, "7D")  # ... but may play a lower trump
    assert game.log.tricks[0].winner == 2
    assert game.current_player == 2


# ---------------------------------------------------------------- 7, 8. score and end


def test_twelve_tricks_end_the_game():
    game = Game(deals=[DEAL_W12], first_dealer=0, max_hands=5)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    log = game.log
    assert [t.winner for t in log.tricks] == [0] * 12 + [2] * 4
    assert log.tricks_won == [12, 0, 4]
    assert log.balances == [12 - 8, 0 - 5, 4 - 3]
    assert log.scores == log.balances == game.scores
    assert game.phase == OVER and game.is_over
    assert game.winner == 0 and not game.truncated
    assert game.current_player is None
    assert game.legal_mask() == 0 and game.legal_actions() == []
    assert len(game.history) == 1  # no next hand
    for action in range(NUM_ACTIONS):
        assert_illegal(game, action, error=GameOverError)


def test_eleven_tricks_do_not_end_the_game_and_the_deal_passes_left():
    game = Game(deals=[DEAL_W11], first_dealer=0)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    first = game.history[0]
    assert [t.winner for t in first.tricks] == [0] * 11 + [2] * 5
    assert first.tricks_won == [11, 0, 5]
    assert first.balances == [11 - 8, 0 - 5, 5 - 3]
    assert game.winner is None and game.phase != OVER
    assert game.hand_number == 2 and len(game.history) == 2
    assert game.dealer == 1 and game.log.dealer == 1
    assert game.quotas == [3, 8, 5]
    assert game.scores == [3, -5, 2]


def test_max_hands_truncates():
    game = Game(deals=[DEAL_W11], first_dealer=0, max_hands=1)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    assert game.log.tricks_won == [11, 0, 5]
    assert game.truncated and game.winner is None
    assert game.phase == OVER and game.current_player is None and game.legal_mask() == 0
    assert len(game.history) == 1
    assert_illegal(game, 0, error=GameOverError)


def test_winning_in_the_last_allowed_hand_is_a_win_not_a_truncation():
    game = Game(deals=[DEAL_W12], first_dealer=0, max_hands=1)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    assert game.winner == 0 and not game.truncated


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_bad_max_hands(bad):
    with pytest.raises(ValueError, match="max_hands"):
        Game(max_hands=bad)


def test_balances_and_running_scores():
    game = Game(deals=[DEAL_W11, DEAL_E], first_dealer=0, seed=2)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    play_hand(game, highest)  # hand 2 (exchange, trump, discards, tricks)
    assert game.hand_number >= 2
    running = [0, 0, 0]
    for log in game.history:
        if log.tricks_won is None:
            break
        counted = [sum(t.winner == s for t in log.tricks) for s in range(3)]
        assert log.tricks_won == counted and sum(counted) == 16
        assert log.balances == [counted[s] - log.quotas[s] for s in range(3)]
        assert sum(log.balances) == 0
        running = [running[s] + log.balances[s] for s in range(3)]
        assert log.scores == running and sum(running) == 0
    assert game.history[1].scores is not None
    assert game.scores == running


# ---------------------------------------------------------------- 4. exchange


def test_no_exchange_in_the_first_hand():
    game = Game(deals=[DEAL_E], first_dealer=0)
    assert game.phase == TRUMP and game.log.exchanges == [] and game.exchange_to_send() is None


def test_no_exchange_after_an_all_zero_hand():
    game = Game(deals=[DEAL_E], first_dealer=0, start_balances=[0, 0, 0])
    assert game.phase == TRUMP and game.log.exchanges == []
    assert game.hands == [hand_mask(DEAL_E, s) for s in range(3)]


@pytest.mark.parametrize("bad", [[1, 0, 0], [1, -1], [1, -1, 0, 0], [True, -1, 0], [0.5, -0.5, 0]])
def test_bad_start_balances(bad):
    with pytest.raises(ValueError, match="start_balances"):
        Game(start_balances=bad)


def _exchange_game(balances, first_dealer=0, deal=DEAL_E) -> Game:
    return Game(deals=[deal], first_dealer=first_dealer, start_balances=balances)


def test_one_up_one_down_repeated_suit_returns_distinct_top_cards():
    # seat 1 up 2, seat 2 down 2; seat 2's hearts are AH KH QH 4H
    game = _exchange_game([0, 2, -2])
    assert game.phase == EXCHANGE and game.current_player == 1
    assert game.exchange_to_send() == (2, 2)
    assert game.legal_mask() == hand_mask(DEAL_E, 1)
    game.apply(card("2H"))
    # nothing moves until the last card is chosen
    assert game.hands[2] == hand_mask(DEAL_E, 2)
    assert game.hands[1] == hand_mask(DEAL_E, 1) & ~mask("2H")
    assert game.log.exchanges[0].returned is None
    assert game.exchange_to_send() == (2, 1)
    assert_illegal(game, card("2H"))  # already chosen
    game.apply(card("3H"))
    entry = game.log.exchanges[0]
    assert (entry.sender, entry.receiver, entry.count) == (1, 2, 2)
    assert entry.sent == cards("2H 3H")
    assert sorted(entry.returned) == sorted(cards("AH KH"))
    assert game.hands[1] == hand_mask(DEAL_E, 1) & ~mask("2H 3H") | mask("AH KH")
    assert game.hands[2] == (hand_mask(DEAL_E, 2) | mask("2H 3H")) & ~mask("AH KH")
    assert [h.bit_count() for h in game.hands] == [16, 16, 16]
    assert game.phase == TRUMP and game.current_player == 0


@pytest.mark.parametrize(
    ("sent", "returned"),
    [
        ("KS 2C", "KS AC"),  # KS comes back: seat 2's spades are only QS 6S 5S 2S
        ("KS 3S", "KS QS"),  # two spades: the received KS and seat 2's own QS
        ("AS KS", "AS KS"),  # both received cards come back, never one twice
        ("3S 4S", "QS 6S"),
        ("2D 3D", "JD TD"),
    ],
)
def test_returns_are_the_receivers_top_cards_of_each_suit_sent(sent, returned):
    game = _exchange_game([0, 2, -2])
    act(game, sent)
    entry = game.log.exchanges[0]
    assert sorted(entry.returned) == sorted(cards(returned))
    assert len(set(entry.returned)) == 2
    assert game.hands[1] == hand_mask(DEAL_E, 1) & ~mask(sent) | mask(returned)
    assert game.hands[2] == (hand_mask(DEAL_E, 2) | mask(sent)) & ~mask(returned)


def test_worked_example_of_section_4_one_up_two_down():
    # previous hand: dealer seat 0 took 10, eldest 4, middle 2 -> +2 -1 -1.
    # Now seat 1 deals (8), seat 2 is eldest (5), seat 0 middle (3) and up.
    game = _exchange_game([2, -1, -1], first_dealer=1)
    assert game.quotas == [3, 8, 5]
    assert game.phase == EXCHANGE and game.current_player == 0
    assert game.exchange_to_send() == (2, 1)  # lower current quota (5) first
    game.apply(card("6H"))
    assert game.exchange_to_send() == (1, 1)
    # simultaneous: nothing returned yet; seat 2's AH is not seat 0's to send
    assert game.hands[2] == hand_mask(DEAL_E, 2)
    assert game.hands[0] == hand_mask(DEAL_E, 0) & ~mask("6H")
    assert game.log.exchanges[0].returned is None
    assert game.legal_mask() == hand_mask(DEAL_E, 0) & ~mask("6H")
    assert_illegal(game, card("AH"))
    assert_illegal(game, card("6H"))
    game.apply(card("7C"))
    to2, to1 = game.log.exchanges
    assert (to2.sender, to2.receiver, to2.sent, to2.returned) == (0, 2, cards("6H"), cards("AH"))
    # seat 1 holds only 2C 3C 4C in clubs: the received 7C itself goes back
    assert (to1.sender, to1.receiver, to1.sent, to1.returned) == (0, 1, cards("7C"), cards("7C"))
    assert game.hands[0] == hand_mask(DEAL_E, 0) & ~mask("6H") | mask("AH")
    assert game.hands[1] == hand_mask(DEAL_E, 1)
    assert game.hands[2] == (hand_mask(DEAL_E, 2) | mask("6H")) & ~mask("AH")
    assert game.phase == TRUMP and game.current_player == 1
    # the dealer (seat 1) was down and returned 7C; QC in the kitty is shown to seat 0
    act(game, "T:S 2D 3D 4D 5D")
    assert game.log.shown == [(0, cards("QC"))]


@pytest.mark.parametrize(
    ("first_dealer", "balances", "expected"),
    [
        # seat 2 (middle, 3) up; seat 1 (eldest, 5) before seat 0 (dealer, 8)
        (0, [-1, -1, 2], [(2, (1, 1)), (2, (0, 1))]),
        # dealer seat 0 up 3; seat 2 (middle, 3, down 2) before seat 1 (eldest, 5, down 1)
        (0, [3, -1, -2], [(0, (2, 2)), (0, (2, 1)), (0, (1, 1))]),
        # seat 1 (eldest, 5) up; seat 0 (middle, 3) before seat 2 (dealer, 8)
        (2, [-2, 3, -1], [(1, (0, 2)), (1, (0, 1)), (1, (2, 1))]),
    ],
)
def test_one_up_two_down_serves_lower_current_quota_first(first_dealer, balances, expected):
    game = _exchange_game(balances, first_dealer=first_dealer)
    seen = []
    sender = expected[0][0]
    dealt = game.hands[sender]
    while game.phase == EXCHANGE:
        seen.append((game.current_player, game.exchange_to_send()))
        # every choice is from the dealt hand: nothing has come back yet
        assert game.legal_mask() & ~dealt == 0
        game.apply(min(game.legal_actions()))
    assert seen == expected
    receivers = [e.receiver for e in game.log.exchanges]
    assert receivers == sorted(set(receivers), key=lambda s: game.quotas[s])


@pytest.mark.parametrize(
    ("first", "second", "first_back", "second_back"),
    [
        # seat 2 returns AC for TC, then KC and the TC it just received
        ("TC", "2C 3C", "AC", "KC TC"),
        ("6H", "2H 3H", "AH", "KH QH"),
    ],
)
def test_two_up_one_down_higher_current_quota_first_then_hand_as_it_stands(first, second, first_back, second_back):
    # dealer seat 0 (8) up 1, eldest seat 1 (5) up 2, middle seat 2 down 3:
    # seat 0 goes first although seat 1 has the larger surplus
    game = _exchange_game([1, 2, -3])
    assert game.current_player == 0 and game.exchange_to_send() == (2, 1)
    act(game, first)
    # the first exchange is complete before the second sender chooses
    entry = game.log.exchanges[0]
    assert (entry.sender, entry.receiver, entry.sent, sorted(entry.returned)) == (
        0,
        2,
        cards(first),
        sorted(cards(first_back)),
    )
    assert game.hands[0] == hand_mask(DEAL_E, 0) & ~mask(first) | mask(first_back)
    after_first = (hand_mask(DEAL_E, 2) | mask(first)) & ~mask(first_back)
    assert game.hands[2] == after_first
    assert game.phase == EXCHANGE and game.current_player == 1 and game.exchange_to_send() == (2, 2)
    act(game, second)
    entry = game.log.exchanges[1]
    assert (entry.sender, entry.receiver, entry.sent, sorted(entry.returned)) == (
        1,
        2,
        cards(second),
        sorted(cards(second_back)),
    )
    assert game.hands[1] == hand_mask(DEAL_E, 1) & ~mask(second) | mask(second_back)
    assert game.hands[2] == (after_first | mask(second)) & ~mask(second_back)
    assert game.phase == TRUMP


def test_two_up_one_down_after_a_real_hand():
    # hand 1 (W11) ends +3 -5 +2. Hand 2: seat 1 deals (8), seat 2 eldest (5),
    # seat 0 middle (3). Seat 2 has the higher current quota: it goes first,
    # although seat 0 has the larger surplus and dealt last time.
    game = Game(deals=[DEAL_W11, DEAL_E], first_dealer=0)
    act(game, W_SCRIPT)
    play_hand(game, highest)
    assert game.history[0].balances == [3, -5, 2]
    assert game.phase == EXCHANGE and game.current_player == 2
    assert game.exchange_to_send() == (1, 2)
    act(game, "5C 6C")  # seat 1's clubs are 2C 3C 4C: both come back
    assert game.current_player == 0 and game.exchange_to_send() == (1, 3)
    act(game, "7S 8S 9S")  # seat 1's spades now AS KS 4S 3S + 7S 8S 9S
    ex = [(e.sender, e.receiver, e.count, e.sent, sorted(e.returned)) for e in game.log.exchanges]
    assert ex == [
        (2, 1, 2, cards("5C 6C"), sorted(cards("5C 6C"))),
        (0, 1, 3, cards("7S 8S 9S"), sorted(cards("AS KS 9S"))),
    ]
    assert game.phase == TRUMP and game.current_player == 1
    # the dealer was down: QC (kitty) ranks above 5C, the lowest club it returned to seat 2
    act(game, "T:D 2D 3D 4D 5D")
    assert [(s, sorted(c)) for s, c in game.log.shown] == [(2, cards("QC"))]


# ---------------------------------------------------------------- 5.4 show rule


def _show(balances, script):
    game = _exchange_game(balances, deal=DEAL_S)
    act(game, script)
    assert game.phase == TRUMP and game.current_player == 0
    game.apply(trump("C"))
    for _ in range(3):
        game.apply(min(game.legal_actions()))
    assert game.log.shown is None  # the kitty is not taken yet
    game.apply(min(game.legal_actions()))
    assert game.phase == PLAY
    return game


def test_show_rule_worked_example_returned_k_and_j_with_a_and_q_in_kitty():
    game = _show([-2, 2, 0], "2H 3H")
    assert sorted(game.log.exchanges[0].returned) == sorted(cards("KH JH"))
    # AH and QH rank above JH (the lowest returned heart): both shown;
    # TH ranks below JH; AS is of a suit not returned
    assert [(s, sorted(c)) for s, c in game.log.shown] == [(1, sorted(cards("AH QH")))]


def test_show_rule_compares_with_the_lowest_returned_card():
    game = _show([-1, 1, 0], "2H")
    assert game.log.exchanges[0].returned == cards("KH")
    # QH ranks below KH: only AH is shown
    assert game.log.shown == [(1, cards("AH"))]


def test_show_rule_each_sender_is_shown_its_own_suits():
    # seat 1 (5) goes first: KH JH back; then seat 2 (3): KS back
    game = _show([-3, 2, 1], "2H 3H 2S")
    ex = [(e.sender, sorted(e.returned)) for e in game.log.exchanges]
    assert ex == [(1, sorted(cards("KH JH"))), (2, cards("KS"))]
    assert sorted((s, sorted(c)) for s, c in game.log.shown) == [(1, sorted(cards("AH QH"))), (2, cards("AS"))]


def test_show_rule_does_not_fire_for_suits_not_returned():
    game = _show([-1, 1, 0], "7C")  # the dealer returns AC; no club in the kitty
    assert game.log.exchanges[0].returned == cards("AC")
    assert game.log.shown == []


def test_show_rule_does_not_fire_for_lower_kitty_cards():
    game = _show([-2, 2, 0], "2H 5S")  # returns KH and KS: TH < KH, QH < KH; AS > KS
    assert sorted(game.log.exchanges[0].returned) == sorted(cards("KH KS"))
    assert [(s, sorted(c)) for s, c in game.log.shown] == [(1, sorted(cards("AH AS")))]


def test_show_rule_does_not_fire_when_the_dealer_is_not_down():
    game = _show([2, -2, 0], "4H 5H")  # the dealer is up: it sends
    assert game.log.exchanges[0].sender == 0
    assert game.log.shown == []
    game = _show([0, 2, -2], "2H 3H")  # the dealer takes no part
    assert game.log.shown == []


# ---------------------------------------------------------------- illegal actions in every phase


def _states():
    yield "exchange", _exchange_game([2, -1, -1], first_dealer=1)
    g = _exchange_game([2, -1, -1], first_dealer=1)
    g.apply(card("6H"))
    yield "exchange-mid", g
    yield "trump", Game(deals=[DEAL_D], first_dealer=0)
    g = Game(deals=[DEAL_D], first_dealer=0)
    act(g, "T:D 2S")
    yield "discard", g
    yield "lead", start_play(DEAL_D, "D")
    g = start_play(DEAL_D, "D")
    act(g, "AH")
    yield "follow", g


@pytest.mark.parametrize("name", ["exchange", "exchange-mid", "trump", "discard", "lead", "follow"])
def test_exactly_the_masked_actions_are_legal(name):
    game = dict(_states())[name]
    legal = game.legal_mask()
    assert legal
    for action in range(NUM_ACTIONS):
        if not legal >> action & 1:
            assert_illegal(game, action)
    for bad in (NUM_ACTIONS, 1000, -1, "AH", 1.5, None):
        assert_illegal(game, bad)
    for action in game.legal_actions():
        clone = game.clone()
        clone.apply(action)  # every masked action is accepted


def test_numpy_integer_actions_are_accepted():
    np = pytest.importorskip("numpy")
    game = Game(deals=[DEAL_D], first_dealer=0)
    game.apply(np.int64(trump("D")))
    assert game.trump == 1


# ---------------------------------------------------------------- determinism


def test_same_seed_and_actions_give_the_same_game():
    a, b = Game(seed=11), Game(seed=11)
    random_play(a, 3)
    random_play(b, 3)
    assert history(a) == history(b)
    assert a.winner == b.winner and a.scores == b.scores
    c = Game(seed=12)
    assert history(c)[0]["deal"] != history(a)[0]["deal"]


def test_given_deals_and_dealer_make_the_seed_irrelevant_for_hand_one():
    a = Game(seed=1, deals=[DEAL_E], first_dealer=2)
    b = Game(seed=2, deals=[DEAL_E], first_dealer=2)
    assert history(a) == history(b)


def test_from_position_continues_like_the_real_game():
    """A position set up from a real game's state plays on exactly as the game does."""
    rng = random.Random(5)
    game = Game(seed=21, max_hands=3)
    while game.hand_number < 2 or game.phase != PLAY or game.tricks_played < 4 or len(game.trick) != 1:
        game.apply(rng.choice(game.legal_actions()))
    position = Game.from_position(
        game.rules,
        hand_number=game.hand_number,
        dealer=game.dealer,
        scores=game.scores,
        previous_balances=game.previous_balances,
        phase=game.phase,
        to_act=game.current,
        hands=game.hands,
        kitty=game.kitty_mask,
        kitty_taken=game.picked_up,
        trump=game.trump,
        discards=game.log.discards,
        trick=game.trick,
        trick_leader=game.leader,
        tricks_won=game.tricks_won,
        tricks_played=game.tricks_played,
        played=game.played,
        voids=game.voids,
    )
    hand = game.hand_number
    while game.hand_number == hand and game.phase != OVER:
        action = rng.choice(game.legal_actions())
        assert position.legal_mask() == game.legal_mask()
        position.apply(action)
        game.apply(action)
    assert position.phase == OVER
    # the position stops at the end of its hand: won like the real game, or else cut off there
    assert position.winner == game.winner if game.winners is not None else position.truncated
    assert position.log.tricks_won == game.history[hand - 1].tricks_won
    assert position.scores == game.history[hand - 1].scores


def test_from_position_refuses_the_exchange_phase():
    with pytest.raises(ValueError, match="trump, discard or play phase"):
        Game.from_position(
            "standard", hand_number=2, dealer=0, scores=[0, 0, 0], previous_balances=[1, -1, 0], phase=EXCHANGE,
            to_act=1, hands=[0, 0, 0], kitty=0, kitty_taken=False, trump=-1, discards=None, trick=[], trick_leader=1,
            tricks_won=[0, 0, 0], tricks_played=0, played=[0, 0, 0], voids=[0, 0, 0],
        )  # fmt: skip


# ---------------------------------------------------------------------- start balances and seeds


def test_every_possible_start_balance_is_accepted_and_every_other_rejected():
    # a hand with quotas 8-5-3 dealt by some seat d: balance of s is t_s - quota(s), 0 <= t_s <= 16
    def possible(balances):
        return any(all(-q <= b <= 16 - q for b, q in zip(balances, rotate(d), strict=True)) for d in range(3))

    def rotate(dealer):
        return [STANDARD_QUOTAS[(seat - dealer) % 3] for seat in range(3)]

    accepted = 0
    for b0 in range(-20, 21):
        for b1 in range(-20, 21):
            balances = [b0, b1, -b0 - b1]
            if possible(balances):
                game = Game(seed=1, first_dealer=b0 % 3, start_balances=balances)
                assert game.legal_mask() != 0  # never stuck
                accepted += 1
            else:
                with pytest.raises(ValueError, match="start_balances"):
                    Game(seed=1, first_dealer=b0 % 3, start_balances=balances)
    assert accepted > 100


STANDARD_QUOTAS = (8, 5, 3)


@pytest.mark.parametrize(
    "balances, match",
    [
        ([20, -20, 0], "cannot come from a hand"),
        ([10**6, -(10**6), 0], "cannot come from a hand"),
        ([10**400, -(10**400), 0], r"beyond \+-10\*\*6"),
        ("abc", "list of 3 integers"),
        ({2, -1, -1}, "list of 3 integers"),
        ([2, -1], "3 integers"),
        ([2.0, -1, -1], "seat 0 has a float"),
        ([1, 1, 1], "sum to zero"),
    ],
    ids=["20", "10**6", "10**400", "text", "set", "two", "float", "sum"],
)
def test_impossible_start_balances_are_a_clear_value_error(balances, match):
    with pytest.raises(ValueError, match=match):
        Game(seed=1, first_dealer=0, start_balances=balances)


def test_start_balances_need_one_dealer_for_all_three_seats():
    # -8 only for the dealer (quota 8) and +13 only for the middle (quota 3): fine together ...
    Game(first_dealer=0, start_balances=[-8, -5, 13])
    # ... but two seats cannot both be the dealer of the previous hand
    with pytest.raises(ValueError, match=r"dealer -8..8, eldest -5..11, middle -3..13"):
        Game(first_dealer=0, start_balances=[-6, -6, 12])


@pytest.mark.parametrize(
    "seed, match",
    [
        (10**5000, "between -2\\*\\*128 and 2\\*\\*128"),
        (2**128, "between"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        ([1], "None, an integer"),
        (True, "None, an integer"),
    ],
    ids=["10**5000", "2**128", "nan", "inf", "list", "bool"],
)
def test_seeds_outside_the_allowed_kinds_are_a_clear_value_error(seed, match):
    with pytest.raises(ValueError, match=match):
        Game(seed=seed)


def test_allowed_seeds_give_repeatable_games():
    for seed in (0, 2**128 - 1, -(2**128) + 1, "seven", 1.5):
        assert Game(seed=seed).history[0].deal_hands == Game(seed=seed).history[0].deal_hands


def test_the_game_state_is_declared_once_and_every_field_is_set() -> None:
    from sm_env.core.game import GAME_FIELDS, HAND_FIELDS, HAND_STATE

    assert not set(GAME_FIELDS) & set(HAND_FIELDS) and Game.__slots__ == GAME_FIELDS + HAND_FIELDS
    game = Game(seed=3, max_hands=5, start_balances=[2, -1, -1])
    for name in HAND_FIELDS:  # _reset_hand_state sets every per-hand field
        delattr(game, name)
    game._reset_hand_state(1, [0, 0, 0], 0, None)
    played = Game(seed=2, max_hands=3)
    rng = random.Random(2)
    for _ in range(150):  # into hand 2 or 3 (scores, previous balances, an exchange)
        played.apply(rng.choice(played.legal_actions()))
    positions = [Game(seed=1), game, played]
    position = Game(seed=4)
    while position.phase != PLAY:
        position.apply(position.legal_actions()[0])
    positions.append(
        Game.from_position(
            "standard",
            hand_number=2,
            dealer=0,
            scores=[1, 0, -1],
            previous_balances=[1, 0, -1],
            phase=PLAY,
            to_act=1,
            hands=position.hands,
            kitty=position.kitty_mask,
            kitty_taken=True,
            trump=2,
            discards=[],
            trick=[],
            trick_leader=1,
            tricks_won=[0, 0, 0],
            tricks_played=0,
            played=[0, 0, 0],
            voids=[0, 0, 0],
        )  # fmt: skip
    )
    for g in positions:
        assert all(hasattr(g, name) for name in Game.__slots__), [n for n in Game.__slots__ if not hasattr(g, n)]
        other = g.clone()
        for name, copied, _ in HAND_STATE:
            if name == "_round_exchanges":  # entries of the copied log
                assert [e.sent for e in other._round_exchanges] == [e.sent for e in g._round_exchanges]
                continue
            assert getattr(other, name) == getattr(g, name), name
            if copied and getattr(g, name) is not None:
                assert getattr(other, name) is not getattr(g, name), name
        assert other.history is not g.history and other.history[-1] is not g.history[-1]
    with pytest.raises(AttributeError):
        g.undeclared = 1  # type: ignore[attr-defined]
