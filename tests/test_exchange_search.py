"""The exchange searched by pimc with policy rollouts (``pimc:rollout=policy,exchange=1``): the position a rollout
starts from at an exchange decision (``Game.at_exchange``, ``agents.search.policy_rollout.exchange_position``), the
values (legal moves only, no hidden card read, the same seed the same values), the fallback where the position
cannot be set up, and the ``policy=PATH`` parameter that points the search at a given policy file."""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import make_deal

from agents import AgentSpecError, make_agent
from agents.players.heuristic import heuristic_action
from agents.players.trained import POLICY_DIR, TrainedAgent
from agents.search.pimc import PimcAgent, searched_phase
from agents.search.policy_rollout import ExchangeSetupError, exchange_position, exchange_searchable
from agents.search.world_sampler import World
from sm_env.compiled import kernels as vk
from sm_env.compiled.loader import load_game
from sm_env.core.game import EXCHANGE, OVER, Game
from sm_env.core.knowledge import player_view
from sm_env.core.logs import ExchangeLog
from sm_env.core.rules import RuleSet
from sm_env.observation import encode, layout_of, observation_size

V1 = os.path.join(POLICY_DIR, "standard_v1.pt")


def _exchange_decisions(rules, balances, seeds, first_dealer=0):
    """(game, view) at every exchange decision with a choice of heuristic hands opening with ``balances``."""
    for seed in seeds:
        game = Game(rules, seed=seed, first_dealer=first_dealer, max_hands=1, start_balances=balances)
        while game.phase == EXCHANGE:
            view = player_view(game, game.current_player)
            if view.legal.bit_count() > 1:
                yield game.clone(), view
            game.apply(heuristic_action(view))


def _truth(game: Game) -> World:
    """The real deal as the world a search would sample (the hands as they lie now, the kitty)."""
    return World(tuple(game.hands), game.kitty_mask, 0)


def _row_observation(game: Game, seat: int) -> np.ndarray:
    st = np.zeros((1, vk.NUM_S), dtype=np.int32)
    cm = np.zeros((1, vk.NUM_C), dtype=np.uint64)
    load_game(st, cm, 0, game)
    out = np.zeros((1, observation_size(game.rules)), dtype=np.float32)
    cfg = vk.rules_config(game.rules, None)
    vk.observe_games(st, cm, cfg, np.array([seat], dtype=np.int64), np.array([0], dtype=np.int64), out)
    return out[0]


# ---------------------------------------------------------------------------- the position


@pytest.mark.parametrize(
    "rules, balances",
    [
        ("standard", [2, -1, -1]),  # one up player serving two down, simultaneous
        ("standard", [1, 1, -2]),  # two up: the second sender does not see the first exchange's cards
        ("standard", [-3, 1, 2]),
        ("standard", [0, 3, -3]),  # three cards chosen one at a time
        ("canadian", [-2, 0, 2]),  # the kitty taken before the discards
    ],
)
def test_the_sender_observes_the_exchange_position_as_the_real_game(rules, balances):
    checked = hidden_rounds = 0
    for game, view in _exchange_decisions(rules, balances, range(3)):
        seat = view.seat
        position = exchange_position(view, _truth(game))
        real = encode(view)
        np.testing.assert_array_equal(encode(player_view(position, seat)), real)
        np.testing.assert_array_equal(_row_observation(position, seat), real)
        assert position.hands == game.hands and position.legal_mask() == game.legal_mask()
        assert position.cards_to_send() == game.cards_to_send() and position.exchange_round == game.exchange_round
        # the others see all but the cards of an exchange the sender did not take part in
        for other in range(3):
            theirs, truth = encode(player_view(position, other)), encode(player_view(game, other))
            for name, off, size in layout_of(game.rules):
                if name not in ("gave", "got"):
                    np.testing.assert_array_equal(theirs[off : off + size], truth[off : off + size], err_msg=name)
        # the rest of the hand plays on from the position (the rollouts' engine, in Python)
        while position.phase != OVER:
            position.apply(heuristic_action(player_view(position, position.current_player)))
        assert sum(position.log.balances) == 0
        checked += 1
        hidden_rounds += any(ex.sent is None for ex in view.exchanges)
    assert checked >= 3
    if balances == [1, 1, -2]:
        assert hidden_rounds > 0  # the round whose cards the sender cannot see was set up


def test_a_position_without_the_chosen_cards_or_the_rounds_done_is_not_the_real_one():
    # planted bugs: the set-up refuses what the view does not show
    game, view = next(
        (g, v) for g, v in _exchange_decisions("standard", [0, 3, -3], range(3)) if v.to_send[0][1] < 3
    )  # a card already chosen
    world = _truth(game)
    assert exchange_position(view, world).hands == game.hands
    with pytest.raises(ValueError, match="do not leave a round of the plan"):
        Game.at_exchange(
            "standard",
            hand_number=1,
            dealer=0,
            scores=[0, 0, 0],
            previous_balances=[0, 3, -3],
            hands=world.hands,
            kitty=world.kitty,
            done=[ExchangeLog(2, 1, 3)],  # a round that is not the plan's
        )
    game2, view2 = next(_exchange_decisions("standard", [1, 1, -2], range(3)))
    with pytest.raises(ValueError, match="opens with 'kitty', not the exchange"):
        Game.at_exchange(
            "9-2-5-variation",
            hand_number=1,
            dealer=0,
            scores=[0, 0, 0],
            previous_balances=[1, 1, -2],
            hands=game2.hands,
            kitty=game2.kitty_mask,
        )


def test_exchanges_that_cannot_be_set_up_are_not_searched_but_played_by_the_policy():
    # 9-2-5-variation sends before trump after the kitty (not an exchange that opens the hand)
    game = Game("9-2-5-variation", seed=1, first_dealer=0, max_hands=1, start_balances=[2, -1, -1])
    while game.phase != EXCHANGE:
        game.apply(heuristic_action(player_view(game, game.current_player)))
    view = player_view(game, game.current_player)
    assert not exchange_searchable(view) and not searched_phase(view, exchange=True)
    agent = PimcAgent(seed=0, samples=2, rollout="policy", exchange=True)
    assert agent.act(view) == TrainedAgent(0).act(view) and agent.worlds == 0
    # 3-5-9: in hand 2 the first up player of hand 1 sends first, an order the position (no hand 1) cannot rebuild
    found = 0
    for seed in range(40):
        game = Game("3-5-9", seed=seed, max_hands=2)
        while game.hand_number == 1 and game.phase != OVER:
            game.apply(heuristic_action(player_view(game, game.current_player)))
        if game.phase != EXCHANGE:
            continue
        view = player_view(game, game.current_player)
        try:
            exchange_position(view, _truth(game))
        except ExchangeSetupError:
            agent = PimcAgent(seed=0, samples=2, rollout="policy", exchange=True)
            assert agent.act(view) == TrainedAgent(0).act(view) and agent.worlds == 0
            found += 1
            break
    assert found, "no hand of 3-5-9 whose exchange order depends on the hand before: the fallback is not tested"


# ---------------------------------------------------------------------------- the search


def _first_exchange_view():
    game, view = next(_exchange_decisions("standard", [2, -1, -1], [4]))
    return game, view


def test_exchange_values_are_of_the_legal_cards_only_and_the_move_is_the_best():
    _game, view = _first_exchange_view()
    agent = PimcAgent(seed=2, samples=3, rollout="policy", exchange=True)
    values = agent.evaluate(view)
    assert sorted(values) == [c for c in range(56) if view.legal >> c & 1]
    assert agent.worlds == 3
    again = PimcAgent(seed=2, samples=3, rollout="policy", exchange=True)
    move = again.act(view)
    best = max(values.values())
    assert values[move] == best and view.legal >> move & 1
    # without exchange=1 the exchange is the policy's own move, unsearched
    plain = PimcAgent(seed=2, samples=3, rollout="policy", bid=True)
    assert plain.act(view) == TrainedAgent(0).act(view) and plain.worlds == 0


def test_same_seed_same_exchange_values_and_the_compiled_and_python_rollouts_agree():
    _game, view = _first_exchange_view()
    first = PimcAgent(seed=7, samples=3, rollout="policy", exchange=True).evaluate(view)
    assert PimcAgent(seed=7, samples=3, rollout="policy", exchange=True).evaluate(view) == first
    python = PimcAgent(seed=7, samples=3, rollout="policy", exchange=True, kernel=False).evaluate(view)
    assert python == first
    assert any(
        PimcAgent(seed=s, samples=3, rollout="policy", exchange=True).evaluate(view) != first for s in range(8, 12)
    ), "the values do not depend on the deals drawn: the comparisons above prove nothing"


def _twin_exchanges() -> list[Game]:
    """Two hands opening with the exchange of seat 0 (dealer, up 2) that differ only in cards hidden from seat 0:
    the two opponents swap a club (QC, 8C), and seat 1 swaps a heart with the kitty (TH, 2H)."""
    deal = make_deal("C:AK D:AKQJ H:AKQJ S:AKQJT9", "C:QJT9 D:T987 H:T987 S:8765", "C:87654 D:6543 H:6543 S:432", None)
    swapped = {10: 6, 6: 10, 34: 26, 26: 34}
    other = {key: [[swapped.get(c, c) for c in h] for h in deal["hands"]] if key == "hands" else None for key in deal}
    other["kitty"] = [swapped.get(c, c) for c in deal["kitty"]]
    return [Game(seed=0, first_dealer=0, max_hands=1, deals=[d], start_balances=[2, -1, -1]) for d in (deal, other)]


def test_two_deals_alike_from_the_senders_view_get_the_same_exchange_search():
    game, twin = _twin_exchanges()
    assert game.hands != twin.hands and game.kitty_mask != twin.kitty_mask
    view, twin_view = player_view(game, 0), player_view(twin, 0)
    assert view.phase == EXCHANGE and view.to_act == 0
    np.testing.assert_array_equal(encode(view), encode(twin_view))
    values = PimcAgent(seed=3, samples=3, rollout="policy", exchange=True).evaluate(view)
    assert PimcAgent(seed=3, samples=3, rollout="policy", exchange=True).evaluate(twin_view) == values
    # one card chosen: the second decision of the round alike too
    card = max(values, key=lambda a: values[a])
    game.apply(card)
    twin.apply(card)
    view, twin_view = player_view(game, 0), player_view(twin, 0)
    assert view.to_act == 0 and view.phase == EXCHANGE
    values = PimcAgent(seed=4, samples=3, rollout="policy", exchange=True).evaluate(view)
    assert PimcAgent(seed=4, samples=3, rollout="policy", exchange=True).evaluate(twin_view) == values


# ---------------------------------------------------------------------------- the parameters


def test_the_spec_takes_exchange_and_a_policy_file():
    agent = make_agent(f"pimc:rollout=policy,exchange=1,bid=1,policy={V1}", 0)
    assert agent.exchange and agent.bid and agent._policy.path == V1
    assert agent.name == f"pimc:rollout=policy,samples=16,bid=1,exchange=1,policy={V1}"
    with pytest.raises(AgentSpecError, match="exchange=1 needs rollout=policy"):
        make_agent("pimc:exchange=1", 0)
    with pytest.raises(AgentSpecError, match="policy=x.pt needs rollout=policy"):
        make_agent("pimc:policy=x.pt", 0)
    with pytest.raises(AgentSpecError, match="policy file not found: missing.pt"):
        make_agent("pimc:rollout=policy,policy=missing.pt", 0)
    with pytest.raises(AgentSpecError, match="'policy' must be a file path, got ''"):
        make_agent("pimc:rollout=policy,policy=", 0)
    with pytest.raises(ValueError, match="no shipped policy plays|cannot play|plays"):
        PimcAgent(0, rollout="policy", policy=V1).check_rules(RuleSet.from_any("woburn-auction"))


def test_the_policy_file_plays_the_rollouts():
    game, view = _first_exchange_view()
    shipped = os.path.join(POLICY_DIR, "standard_v7.pt")
    default = PimcAgent(seed=5, samples=3, rollout="policy", exchange=True).evaluate(view)
    same_file = PimcAgent(seed=5, samples=3, rollout="policy", exchange=True, policy=shipped)
    assert same_file.evaluate(view) == default  # the shipped file given by name: the same search
    older = PimcAgent(seed=5, samples=3, rollout="policy", exchange=True, policy=V1)
    assert older.evaluate(view) != default  # another network plays the rollouts
    assert [key[0] for key in older._rollouts] == [V1]
