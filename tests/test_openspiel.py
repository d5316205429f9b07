"""sm_env/envs/openspiel_game.py: Sergeant Major as an OpenSpiel game (the ``openspiel`` extra).

OpenSpiel's own random-simulation check on several presets (four players included), a lockstep check
against ``sm_env.env`` (the same deal and actions give the same players to act, legal sets, tensors,
rewards and returns), hidden cards kept out of other players' tensors and strings, serialization.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install -e '.[openspiel]')")

import sm_env  # noqa: E402
from sm_env.core.game import Game, IllegalActionError  # noqa: E402
from sm_env.core.rules import RuleSet  # noqa: E402
from sm_env.envs.openspiel_game import (  # noqa: E402
    GAME_NAME,
    deal_chance_actions,
    history_text,
    state_from_history,
)


def _load(**params):
    return pyspiel.load_game(GAME_NAME, params)


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "standard"},
        {"rules": "four-5-3-2-2"},
        {"rules": "woburn-auction"},
        {"rules": "calls"},
        {"rules": "9-5-3-one-card"},
        {"rules": "6-3-8"},
        {"rules": "dealer-assigns"},
        {"rules": "woburn", "start_balances": "2 -1 -1"},
        {"rules": "standard", "episode": "game", "max_hands": 3},
        {"rules": "four-6-3-2-1", "episode": "game", "max_hands": 2, "reward": "result"},
    ],
    ids=lambda p: "-".join(str(v) for v in p.values()),
)
def test_openspiel_random_simulation(params):
    game = _load(**params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def _random_deals(rules: RuleSet, count: int, rng: random.Random) -> list[dict]:
    deck = list(range(1, 52) if rules.no_kitty_51 else range(52))
    size, n = rules.hand_size, rules.num_players
    deals = []
    for _ in range(count):
        rng.shuffle(deck)
        deals.append({"hands": [deck[i * size : (i + 1) * size] for i in range(n)], "kitty": deck[n * size :]})
    return deals


@pytest.mark.parametrize(
    ("rules", "episode", "max_hands", "reward"),
    [
        ("standard", "game", 4, "score"),
        ("four-5-3-2-2", "hand", 100, "score"),
        ("woburn-auction", "game", 3, "score"),
        ("chips-12", "game", 3, "score"),
        ("calls", "game", 3, "balance"),
        ("standard", "game", 6, "result"),
    ],
)
def test_lockstep_with_the_aec_env(rules, episode, max_hands, reward):
    """Same first dealer, deals and actions: the same seat to act, legal set, tensors, rewards and end."""
    rng = random.Random(f"{rules}-{episode}")
    rule_set = RuleSet.from_any(rules)
    n = rule_set.num_players
    deals = _random_deals(rule_set, 40, rng)
    first_dealer = rng.randrange(n)
    env = sm_env.env(rules=rules, episode=episode, max_hands=max_hands, reward=reward)
    env.reset(seed=1, options={"first_dealer": first_dealer, "deals": deals})
    game = _load(rules=rules, episode=episode, max_hands=max_hands, reward=reward)
    state = game.new_initial_state()
    chance = [first_dealer] + [card for deal in deals for card in deal_chance_actions(deal, rule_set)]
    agents = env.unwrapped.possible_agents
    env_returns = np.zeros(n)
    decisions = 0
    while env.agents:
        while state.is_chance_node():
            action = chance.pop(0)
            assert action in dict(state.chance_outcomes())
            state.apply_action(action)
        seat = state.current_player()
        assert agents[seat] == env.agent_selection
        mask = env.observe(env.agent_selection)["action_mask"]
        assert state.legal_actions() == list(np.flatnonzero(mask))
        assert state.legal_actions_mask() == list(mask)
        for p, agent in enumerate(agents):
            observation = env.observe(agent)["observation"]
            np.testing.assert_array_equal(state.observation_tensor(p), observation)
            np.testing.assert_array_equal(state.information_state_tensor(p), observation)
            if p != seat:
                assert state.legal_actions(p) == []
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
        decisions += 1
        step_rewards = [env.rewards[agent] for agent in agents]
        assert state.rewards() == step_rewards
        env_returns += step_rewards
        if env.agents and all(env.terminations[a] or env.truncations[a] for a in env.agents):
            break  # the env's game is over: the last step is only the dead agents' removal
    assert state.is_terminal()
    assert state.returns() == pytest.approx(list(env_returns))
    assert decisions > 20
    if reward == "score":  # the rewards of a game add up to its final scores
        assert state.returns() == list(map(float, env.unwrapped.record()["hands"][-1]["scores"]))


def _first_decision(game, deal: dict, dealer: int):
    state = game.new_initial_state()
    for action in [dealer] + deal_chance_actions(deal, game.rules):
        state.apply_action(action)
    return state


def test_no_hidden_card_in_another_players_tensors_or_strings():
    """Seat 1 (eldest) sees the same tensors and strings whatever the others hold, through the dealer's
    trump and discards and its own lead: deal B moves four of seat 2's cards into the kitty and back."""
    game = _load(rules="standard")
    deal_a = _random_deals(game.rules, 1, random.Random(3))[0]
    deal_b = json.loads(json.dumps(deal_a))
    deal_b["hands"][2][:4], deal_b["kitty"] = deal_b["kitty"], deal_b["hands"][2][:4]
    states = [_first_decision(game, deal, dealer=0) for deal in (deal_a, deal_b)]
    dealer_cards = sorted(deal_a["hands"][0])[:4]
    for action in [52, *dealer_cards]:  # trump clubs, then the dealer discards four of its own cards
        for p in (1,):
            assert states[0].observation_tensor(p) == states[1].observation_tensor(p)
            assert states[0].information_state_string(p) == states[1].information_state_string(p)
            assert states[0].observation_string(p) == states[1].observation_string(p)
        for state in states:
            state.apply_action(action)
    assert states[0].current_player() == 1
    assert states[0].legal_actions() == states[1].legal_actions()
    assert states[0].information_state_tensor(1) == states[1].information_state_tensor(1)
    # and the tensors do tell the deals apart for the seat whose cards moved, and for the dealer
    assert states[0].observation_tensor(2) != states[1].observation_tensor(2)
    assert states[0].observation_tensor(0) != states[1].observation_tensor(0)
    # seat 1's own hand is in its tensor (the hand plane: the first 52 entries), and nobody else's
    hand_plane = np.asarray(states[0].observation_tensor(1)[:52])
    assert sorted(np.flatnonzero(hand_plane)) == sorted(deal_a["hands"][1])


def test_chance_nodes_deal_card_by_card():
    game = _load(rules="standard")
    state = game.new_initial_state()
    assert state.is_chance_node() and [a for a, _ in state.chance_outcomes()] == [0, 1, 2]
    state.apply_action(2)
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(52)) and sum(p for _, p in outcomes) == pytest.approx(1)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 12) == "deal AC to seat 0"
    state.apply_action(12)
    assert 12 not in dict(state.chance_outcomes()) and len(state.chance_outcomes()) == 51
    assert state.observation_string(0) == "dealing" and not any(state.observation_tensor(0))
    assert game.num_distinct_actions() == 56 and game.max_chance_outcomes() == 52
    assert _load(rules="6-3-8").new_initial_state().child(0).chance_outcomes()[0][0] == 1  # no 2C
    assert _load(rules="dealer-assigns").num_distinct_actions() == 74


def test_an_illegal_action_is_refused_and_changes_nothing():
    state = _first_decision(_load(), _random_deals(RuleSet.from_any("standard"), 1, random.Random(1))[0], 0)
    before = state.information_state_string(0)
    with pytest.raises(IllegalActionError, match="illegal action 3"):
        state.apply_action(3)  # the dealer must name trump
    assert state.information_state_string(0) == before and state.legal_actions() == [52, 53, 54, 55]


def test_serialize_and_deserialize():
    game = _load(rules="woburn", episode="game", max_hands=3)
    rng = random.Random(5)
    state = game.new_initial_state()
    for _ in range(130):  # into hand 2
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(rng.choice(actions))
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert state2.history() == state.history() and str(state2) == str(state)
    assert state2.returns() == state.returns()
    replayed = state_from_history(game, history_text(state))
    assert replayed.history() == state.history()
    assert replayed.information_state_tensor(1) == state.information_state_tensor(1)
    assert replayed.returns() == state.returns()
    with pytest.raises(ValueError, match=r"action 2 \(7\) is not legal here"):
        state_from_history(game, "0 7 7")
    with pytest.raises(ValueError, match="not an integer"):
        state_from_history(game, "0 x")


def test_parameters():
    game = _load(rules="standard;kitty_trick:true;quotas:9/5/3", episode="game", max_hands=5)
    assert game.rules.kitty_trick and game.rules.quotas == (9, 5, 3) and game.max_game_length() == 500
    assert pyspiel.load_game(str(game)).rules == game.rules  # the game string reads back
    assert _load(rules="6-3-8").get_parameters()["rules"] == "6-3-8;"
    assert pyspiel.load_game(str(_load(rules="6-3-8"))).rules.name == "6-3-8"
    state = _first_decision(
        _load(rules="woburn", start_balances="2 -1 -1"),
        _random_deals(RuleSet.from_any("woburn"), 1, random.Random(2))[0],
        0,
    )
    assert sm_env.PHASE_NAMES[state.view(state.current_player()).phase] == "exchange"
    for params, message in [
        ({"rules": "nope"}, "unknown rule preset"),
        ({"rules": "standard;kitty_trick"}, "not an option:value pair"),
        ({"rules": "standard;colour:red"}, "unknown rule option"),
        ({"episode": "season"}, "episode must be"),
        ({"reward": "result"}, "reward='result'"),
        ({"start_balances": "2 x"}, "start_balances must be 3 whole numbers"),
    ]:
        with pytest.raises(Exception, match=message):
            _load(**params)


def test_state_from_engine_counts_returns_from_there():
    game = _load(rules="standard")
    engine = Game("standard", seed=4, first_dealer=1, max_hands=1)
    state = game.state_from_engine(engine)
    assert state.current_player() == engine.current and state.legal_actions() == engine.legal_actions()
    rng = random.Random(0)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    final = state.engine()
    assert state.returns() == [float(s) for s in final.scores]
    assert engine.phase != final.phase  # the engine given was copied, not stepped
    with pytest.raises(ValueError, match="the engine plays"):
        game.state_from_engine(Game("woburn", seed=1))


def test_openspiel_rl_environment_and_observer():
    from open_spiel.python import rl_environment
    from open_spiel.python.observation import make_observation

    env = rl_environment.Environment(_load(rules="four-5-3-2-2"))
    step = env.reset()
    assert len(step.observations["info_state"][0]) == 1016
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([step.observations["legal_actions"][player][0]])
    assert sum(step.rewards) == 0
    observer = make_observation(env.game, pyspiel.IIGObservationType(perfect_recall=True))
    observer.set_from(env.get_state, 0)
    assert observer.tensor.shape == (1016,)
    with pytest.raises(ValueError, match="only the observation of one player"):
        make_observation(
            env.game, pyspiel.IIGObservationType(perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE)
        )


def test_openspiel_ismcts_agent_plays_a_hand():
    """training/evaluation/openspiel_demo.py: OpenSpiel's ISMCTS bot as an agent, searching sampled worlds (a smoke
    check; the figures come from running the script)."""
    from training.evaluation import openspiel_demo as script

    agent = script.OpenSpielIsmctsAgent(script.load("standard"), simulations=4, uct_c=4.0, seed=1)
    agent.reset(1)
    balances = script.play_hand("standard", 11, [None, agent, None])
    assert sum(balances) == 0 and len(balances) == 3
