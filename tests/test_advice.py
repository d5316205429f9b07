"""agents/advice.py: the shipped policy's probabilities and pimc's values for every legal action of a view."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.advice import MAX_SAMPLES, AdviceError, advise
from agents.players.ppo_agent import load_numpy_policy
from agents.players.trained import trained_policy
from agents.search.pimc import PimcAgent
from sm_env.core.cards import from_mask
from sm_env.core.game import EXCHANGE, PLAY, Game
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.observation import encode


def view_at(phase: int, seed: int = 3, rules: str = "standard", **game: object) -> PlayerView:
    """The view of the seat to act at the first decision of ``phase`` in a game of random legal play."""
    g = Game(rules, seed=seed, **game)
    rng = random.Random(seed)
    while g.phase != phase:
        g.apply(rng.choice(g.legal_actions()))
    return player_view(g, g.current_player)


def test_every_legal_action_gets_a_probability_and_a_value_and_the_header_says_the_search():
    view = view_at(PLAY)
    advice = advise(view, samples=8, seed=5)
    assert [m.action for m in advice.moves] == from_mask(view.legal)
    assert len(advice.moves) > 1
    assert sum(m.probability for m in advice.moves) == pytest.approx(1.0)
    assert advice.search == {"search": "pimc", "rollouts": "heuristic", "samples": 8, "seed": 5, "bid": True}
    assert advice.policy == "standard_v7.pt" and advice.policy_note is None and advice.search_note is None
    # the values are pimc's own (the same deals), the probabilities the shipped policy's
    values = PimcAgent(seed=5, samples=8).evaluate(view, from_mask(view.legal))
    assert {m.action: m.value for m in advice.moves} == values
    p = load_numpy_policy(trained_policy(view.rules))[0].probabilities(encode(view), view.legal)
    assert {m.action: m.probability for m in advice.moves} == {a: pytest.approx(float(p[a])) for a in values}
    assert advice.best_value == max(values.values())
    assert advice.to_json()["moves"][0] == {
        "action": advice.moves[0].action,
        "text": advice.moves[0].text,
        "probability": advice.moves[0].probability,
        "value": advice.moves[0].value,
    }


def test_policy_probabilities_are_zero_off_the_legal_set_and_peak_where_the_policy_plays():
    view = view_at(PLAY, seed=11)
    net = load_numpy_policy(trained_policy(view.rules))[0]
    p = net.probabilities(encode(view), view.legal)
    legal = from_mask(view.legal)
    assert p.sum() == pytest.approx(1.0) and np.all(p[[a for a in range(len(p)) if a not in legal]] == 0)
    assert int(np.argmax(p)) == net.choose(encode(view), view.legal)


def test_same_seed_same_advice_and_the_seed_is_in_the_header():
    view = view_at(PLAY, seed=4)
    assert advise(view, samples=6, seed=1) == advise(view, samples=6, seed=1)
    assert advise(view, samples=6, seed=2).search["seed"] == 2


def test_what_is_not_given_is_left_out_with_the_reason(no_shipped_policy):
    no_shipped_policy("dealer-assigns")
    exchange = view_at(EXCHANGE, seed=2, start_balances=[2, -1, -1])
    advice = advise(exchange, samples=4)
    assert all(m.value is None for m in advice.moves) and "does not search the exchange" in advice.search_note
    assert all(m.probability is not None for m in advice.moves)  # the policy still speaks
    assigns = advise(view_at(PLAY, seed=1, rules="dealer-assigns"), samples=2, search=False)
    assert all(m.probability is None for m in assigns.moves) and assigns.policy is None
    assert "no shipped policy plays the rule set 'dealer-assigns'" in assigns.policy_note
    assert assigns.search_note == "search not asked for"


def test_a_forced_move_is_not_searched():
    g = Game("standard", seed=9)
    rng = random.Random(9)
    while True:  # the last trick: every seat has one card left
        if g.phase == PLAY and len(from_mask(g.legal_mask())) == 1:
            break
        g.apply(rng.choice(g.legal_actions()))
    advice = advise(player_view(g, g.current_player), samples=4)
    assert [m.value for m in advice.moves] == [None] and "only legal action" in advice.search_note


@pytest.mark.parametrize(
    "samples, seed, cap, message",
    [
        (0, 0, MAX_SAMPLES, "samples must be a whole number from 1 to 10000"),
        (MAX_SAMPLES + 1, 0, MAX_SAMPLES, "samples must be a whole number from 1 to 10000"),
        (True, 0, MAX_SAMPLES, "samples must be"),
        (201, 0, 200, "from 1 to 200"),
        (4, -1, MAX_SAMPLES, "seed must be a whole number"),
        (4, 2**128, MAX_SAMPLES, "seed must be a whole number"),
        (4, "1", MAX_SAMPLES, "seed must be a whole number"),
    ],
)
def test_bad_settings_are_refused_by_name(samples, seed, cap, message):
    with pytest.raises(AdviceError, match=message):
        advise(view_at(PLAY), samples=samples, seed=seed, cap=cap)


def test_a_seat_that_is_not_to_act_gets_no_advice():
    g = Game("standard", seed=1)
    waiting = next(s for s in range(3) if s != g.current_player)
    with pytest.raises(AdviceError, match=f"seat {waiting} is not to act"):
        advise(player_view(g, waiting))


def test_the_search_gives_its_own_values_and_pimc_stands_in_where_it_does_not_play_the_rules():
    """searcher="search": the values of the agent spec search (belief deals, policy rollouts), named in the header;
    on a rule set it does not read (calls), pimc's values with a note saying why; an unknown searcher is refused."""
    from agents import make_agent

    view = view_at(PLAY, seed=4)
    legal = from_mask(view.legal)
    advice = advise(view, samples=3, seed=2, searcher="search")
    assert advice.search == {"search": "search", "rollouts": "policy", "samples": 3, "seed": 2, "bid": True}
    assert {m.action: m.value for m in advice.moves} == make_agent("search:samples=3", 2).evaluate(view, legal)
    assert advice.search_note is None and advice.policy == "standard_v7.pt"
    calls = view_at(PLAY, seed=4, rules="calls")
    stand_in = advise(calls, samples=3, seed=2, searcher="search")
    assert stand_in.search["search"] == "pimc" and stand_in.search["rollouts"] == "heuristic"
    assert stand_in.search_note.startswith("pimc's values: search does not play these rules")
    assert {m.action: m.value for m in stand_in.moves} == PimcAgent(seed=2, samples=3).evaluate(
        calls, from_mask(calls.legal)
    )
    with pytest.raises(AdviceError, match="searcher must be one of pimc, search, got 'ismcts'"):
        advise(view, searcher="ismcts")
