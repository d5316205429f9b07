"""sm_env/envs/openspiel_game.py: Sergeant Major as an OpenSpiel game (the ``openspiel`` extra).

OpenSpiel's own random-simulation check on several presets (four players included), a lockstep check
against ``sm_env.env`` (the same deal and actions give the same players to act, legal sets, observations,
rewards and returns), the perfect-recall information state (what it determines, that it forgets nothing,
that its tensor and string tell the same states apart, no hidden card in it), ``resample_from_infostate``
and OpenSpiel's Python ISMCTS on real states, the parameters, rewards by OpenSpiel's convention,
serialization without pickle.
"""

from __future__ import annotations

import base64
import json
import pickle
import random
import re

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install -e '.[openspiel]')")

import sm_env  # noqa: E402
from sm_env.core.cards import CARD_TEXT  # noqa: E402
from sm_env.core.game import Game, IllegalActionError  # noqa: E402
from sm_env.core.rules import RuleSet  # noqa: E402
from sm_env.envs.openspiel_game import (  # noqa: E402
    GAME_NAME,
    deal_chance_actions,
    history_text,
    info_state_layout,
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
        {"players": 4, "episode": "game", "max_hands": 2},
        {"rules": "9-2-5-variation", "episode": "game", "max_hands": 2},
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
    state_rewards = np.zeros(n)  # rewards() summed at every state, chance nodes included
    decisions = 0
    while env.agents:
        while state.is_chance_node():
            action = chance.pop(0)
            assert action in dict(state.chance_outcomes())
            assert state.rewards() == [0.0] * n  # nothing is paid at a chance node
            state.apply_action(action)
            state_rewards += state.rewards()
        seat = state.current_player()
        assert agents[seat] == env.agent_selection
        mask = env.observe(env.agent_selection)["action_mask"]
        assert state.legal_actions() == list(np.flatnonzero(mask))
        assert state.legal_actions_mask() == list(mask)
        for p, agent in enumerate(agents):
            np.testing.assert_array_equal(state.observation_tensor(p), env.observe(agent)["observation"])
            if p != seat:
                assert state.legal_actions(p) == []
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
        decisions += 1
        step_rewards = [env.rewards[agent] for agent in agents]
        if not state.is_chance_node():  # else paid on reaching the next decision
            assert state.rewards() == step_rewards
        state_rewards += state.rewards()
        env_returns += step_rewards
        if env.agents and all(env.terminations[a] or env.truncations[a] for a in env.agents):
            break  # the env's game is over: the last step is only the dead agents' removal
    assert state.is_terminal()
    assert state.returns() == pytest.approx(list(env_returns))
    assert list(state_rewards) == pytest.approx(list(env_returns))
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
            assert states[0].information_state_tensor(p) == states[1].information_state_tensor(p)
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
    assert states[0].information_state_tensor(2) != states[1].information_state_tensor(2)
    assert states[0].information_state_string(0) != states[1].information_state_string(0)
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


def _random_state(game, rng: random.Random, steps: int):
    state = game.new_initial_state()
    for _ in range(steps):
        if state.is_terminal():
            break
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(rng.choice(actions))
    return state


def test_serialize_and_deserialize_without_pickle(tmp_path):
    game = _load(rules="woburn", episode="game", max_hands=3)
    state = _random_state(game, random.Random(5), 130)  # into hand 2
    assert state.serialize() == history_text(state)
    again = game.deserialize_state(state.serialize())
    assert again.history() == state.history() and str(again) == str(state) and again.returns() == state.returns()
    assert again.information_state_string(1) == state.information_state_string(1)
    # OpenSpiel's own text (C++: it pickles a Python game's state) still round-trips there ...
    text = pyspiel.serialize_game_and_state(game, state)
    _, state2 = pyspiel.deserialize_game_and_state(text)
    assert state2.history() == state.history() and str(state2) == str(state)
    # ... and game.deserialize_state reads only its history line: a crafted pickle is never loaded
    planted = tmp_path / "planted"
    evil = base64.b64encode(pickle.dumps(_Planted(str(planted)))).decode()
    history = ",".join(f"-1:{a}" for a in state.history()[:10])  # the first dealer and nine cards
    crafted = f"history={history}\nmove_number=10\n__dict__={evil}"
    assert game.deserialize_state(crafted).history() == state.history()[:10]
    assert not planted.exists()
    replayed = state_from_history(game, history_text(state))
    assert replayed.information_state_tensor(1) == state.information_state_tensor(1)
    with pytest.raises(ValueError, match=r"action 2 \(7\) is not legal here"):
        state_from_history(game, "0 7 7")
    with pytest.raises(ValueError, match="not an integer"):
        game.deserialize_state("0 x")
    with pytest.raises(ValueError, match="not player:action"):
        game.deserialize_state("history=0,1")


class _Planted:
    """Unpickling it would create a file: the proof that a text was unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


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
        ({"max_hands": 10**9}, "max_hands must be a whole number from 1 to 1000"),
        ({"max_hands": 0}, "max_hands must be a whole number"),
        ({"players": 5}, "players must be 3 or 4"),
        ({"players": 3, "rules": "four-5-3-2-2"}, "players=3 but the rules 'four-5-3-2-2' are for four players"),
        ({"players": 4, "rules": "calls"}, "four players"),
    ]:
        with pytest.raises(ValueError, match=message):
            _load(**params)


def test_players_parameter():
    """players=4 plays the four-player rules (standard becomes four-5-3-2-2), players=0 (the default) the rule
    set's own number; the game string keeps the number."""
    four = _load(players=4)
    assert four.rules == RuleSet.from_any("four-5-3-2-2") and four.num_players() == 4
    assert four.get_parameters()["players"] == 4 and pyspiel.load_game(str(four)).rules == four.rules
    assert _load(rules="four-6-3-2-1").num_players() == 4
    assert _load(rules="four-6-3-2-1", players=4).rules == RuleSet.from_any("four-6-3-2-1")
    woburn = _load(rules="woburn", players=4).rules
    assert woburn.num_players == 4 and woburn.max_exchange == 3 and woburn.quotas == (5, 3, 2, 2)
    assert _load().get_parameters()["players"] == 3
    assert len(_first_decision(four, _random_deals(four.rules, 1, random.Random(0))[0], 0).legal_actions()) == 4


def test_rewards_follow_openspiel_convention():
    """A game of hands: rewards() is zero at chance nodes and at a decision the reward of the transitions since
    the previous one, so summing it at every state or at decisions and the end both give returns()."""
    game = _load(rules="standard", episode="game", max_hands=4)
    for seed in range(3):
        rng = random.Random(seed)
        state = game.new_initial_state()
        every = np.zeros(3)
        decisions = np.zeros(3)
        paid = 0
        while not state.is_terminal():
            if state.is_chance_node():
                assert state.rewards() == [0.0, 0.0, 0.0]
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            else:
                decisions += state.rewards()
                paid += any(state.rewards())
                state.apply_action(rng.choice(state.legal_actions()))
            every += state.rewards()
        decisions += state.rewards()
        assert list(every) == pytest.approx(state.returns()) and list(decisions) == pytest.approx(state.returns())
        assert paid >= 1  # a hand's reward reached a decision through the next deal


def test_state_from_engine_counts_returns_from_there():
    game = _load(rules="standard")
    engine = Game("standard", seed=4, first_dealer=1, max_hands=1)
    state = game.state_from_engine(engine)
    assert state.current_player() == engine.current and state.legal_actions() == engine.legal_actions()
    with pytest.raises(ValueError, match="no history to redraw"):
        state.resample_from_infostate(engine.current, pyspiel.UniformProbabilitySampler(0, 0.0, 1.0))
    rng = random.Random(0)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    final = state.engine()
    assert state.returns() == [float(s) for s in final.scores]
    assert engine.phase != final.phase  # the engine given was copied, not stepped
    with pytest.raises(ValueError, match="the engine plays"):
        game.state_from_engine(Game("woburn", seed=1))


def test_openspiel_rl_environment_and_observers():
    from open_spiel.python import rl_environment
    from open_spiel.python.observation import make_observation

    game = _load(rules="four-5-3-2-2")
    env = rl_environment.Environment(game)
    step = env.reset()
    size = 4 + sum(size for _, _, size in info_state_layout(game.rules))
    assert len(step.observations["info_state"][0]) == size == game.information_state_tensor_size()
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([step.observations["legal_actions"][player][0]])
    assert sum(step.rewards) == 0
    observer = make_observation(env.game, pyspiel.IIGObservationType(perfect_recall=True))
    observer.set_from(env.get_state, 0)
    assert observer.tensor.shape == (size,)
    assert list(observer.tensor) == env.get_state.information_state_tensor(0)
    observation = make_observation(env.game, pyspiel.IIGObservationType(perfect_recall=False))
    observation.set_from(env.get_state, 0)
    assert observation.tensor.shape == (1016,)
    with pytest.raises(ValueError, match="only the observation of one player"):
        make_observation(
            env.game, pyspiel.IIGObservationType(perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE)
        )
    assert _load(rules="standard", episode="game", max_hands=3).information_state_tensor_size() == 3 + 3 * 661


# ----------------------------------------------------------------------------- the information state


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "woburn", "start_balances": "2 -1 -1"},  # seat 1 does not see seat 0's exchange with seat 2
        {"rules": "standard", "episode": "game", "max_hands": 2},
    ],
    ids=["exchange", "game"],
)
def test_information_state_is_perfect_recall(params):
    """~100 hands of one deal, random play: every action changes every seat's information state string; states
    sharing a seat's string share its legal actions, its observation and its own past (its earlier information
    states and actions: Kuhn's perfect recall); the tensor tells apart exactly the states the string does."""
    game = _load(**params)
    n = game.num_players()
    hands = 2 if params.get("episode") == "game" else 1
    deal = _random_deals(game.rules, 1, random.Random(7))[0]
    chance = deal_chance_actions(deal, game.rules)
    rng = random.Random(7)
    seen: dict[tuple[int, str], tuple] = {}
    strings_of: dict[bytes, str] = {}
    shared = 0
    for _ in range(100 // hands):
        state = game.new_initial_state()
        own: list[tuple[tuple[str, int], ...]] = [()] * n
        before = [state.information_state_string(p) for p in range(n)]
        while not state.is_terminal():
            if state.is_chance_node():
                dealing = state.dealing(0)
                action = 0 if dealing is None else chance[dealing[0]]  # seat 0 deals first, every hand the deal
            else:
                seat = state.current_player()
                for p in range(n):
                    key = state.information_state_string(p)
                    values = np.asarray(state.information_state_tensor(p), np.float32)
                    assert values.min() >= 0.0 and values.max() <= 1.0
                    tensor = values.tobytes()
                    assert strings_of.setdefault(tensor, key) == key  # equal tensors: equal strings
                    legal = state.legal_actions(p) if p == seat else None
                    facts = (tensor, tuple(state.observation_tensor(p)), legal, own[p])
                    if (p, key) in seen:
                        shared += 1
                        assert seen[(p, key)] == facts, (p, key)  # equal strings: the same tensor, legal set, past
                    seen[(p, key)] = facts
                action = rng.choice(state.legal_actions())
                own[seat] = (*own[seat], (before[seat], action))
            state.apply_action(action)
            after = [state.information_state_string(p) for p in range(n)]
            assert all(a != b for a, b in zip(after, before, strict=True))  # every action is observed
            before = after
    assert shared > 500  # many states share an information state (the other seats' hidden choices differ)


def test_information_state_holds_no_hidden_card():
    """Two games that differ only in cards seat 1 cannot see (the other two seats swap cards it never sees
    played, the dealer discards differently) give seat 1 the same information state, string and tensor."""
    game = _load(rules="standard")
    deal = _random_deals(game.rules, 1, random.Random(11))[0]
    dealer_cards = sorted(deal["hands"][0])
    states = [_first_decision(game, deal, dealer=0) for _ in range(2)]
    states[0].apply_action(52)
    states[1].apply_action(52)
    for card in dealer_cards[:4]:
        states[0].apply_action(card)
    for card in dealer_cards[4:8]:
        states[1].apply_action(card)
    assert states[0].information_state_string(1) == states[1].information_state_string(1)
    assert states[0].information_state_tensor(1) == states[1].information_state_tensor(1)
    assert states[0].information_state_string(0) != states[1].information_state_string(0)
    words = set(re.split(r"[^0-9A-Z]+", states[0].information_state_string(1)))
    assert {CARD_TEXT[c] for c in deal["hands"][1]} <= words
    assert not {CARD_TEXT[c] for c in deal["hands"][0] + deal["hands"][2] + deal["kitty"]} & words
    tensor = np.asarray(states[0].information_state_tensor(1))
    dealt = 3 + dict((name, offset) for name, offset, _ in info_state_layout(game.rules))["dealt"]
    assert sorted(np.flatnonzero(tensor[dealt : dealt + 52])) == sorted(deal["hands"][1])


# ----------------------------------------------------------------------------- resampling and ISMCTS


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "woburn", "episode": "game", "max_hands": 3},
        {"rules": "9-2-5-variation", "episode": "game", "max_hands": 2},
        {"rules": "four-5-3-2-2", "episode": "game", "max_hands": 2},
        {"rules": "9-5-3-one-card"},
        {"rules": "woburn-auction", "episode": "game", "max_hands": 2},
    ],
    ids=lambda p: p["rules"],
)
def test_resample_from_infostate(params):
    """Resampled states keep the seat's information state (the whole game replayed), its hand and legal
    actions, redraw what it cannot see (the histories differ) and are reproducible from the sampler's seed;
    the draw reads nothing but the information state (a world sharing it draws the same)."""
    game = _load(**params)
    rng = random.Random(3)
    n = game.num_players()
    redrawn = decisions = 0
    for round_ in range(8):
        history = _random_state(game, rng, 10_000).history()
        state, decision_points = game.new_initial_state(), []
        for index, action in enumerate(history):
            if not state.is_chance_node():
                decision_points.append(index)
            state.apply_action(action)
        # a random decision of a random episode, every fourth time any point (a deal in progress too)
        cut = rng.choice(decision_points) if round_ % 4 else rng.randrange(1, len(history))
        state = game.new_initial_state()
        for action in history[:cut]:
            state.apply_action(action)
        decisions += not state.is_chance_node()
        for p in range(n):
            sampler = pyspiel.UniformProbabilitySampler(round_ * 10 + p, 0.0, 1.0)
            worlds = [state.resample_from_infostate(p, sampler) for _ in range(3)]
            for world in worlds:
                assert world.information_state_string(p) == state.information_state_string(p)
                assert world.information_state_tensor(p) == state.information_state_tensor(p)
                assert world.current_player() == state.current_player()
                assert len(world.history()) == len(state.history())
                if not state.is_chance_node():
                    assert world.view(p).hand == state.view(p).hand
                    if state.current_player() == p:
                        assert world.legal_actions() == state.legal_actions()
            redrawn += any(world.history() != state.history() for world in worlds)
            again = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(round_ * 10 + p, 0.0, 1.0))
            assert again.history() == worlds[0].history()
            # the draw depends on the information state alone: a world with the same one draws the same
            twin = worlds[1].resample_from_infostate(p, pyspiel.UniformProbabilitySampler(round_ * 10 + p, 0.0, 1.0))
            assert twin.history() == worlds[0].history()
    assert redrawn > 4 * n and decisions >= 6


def test_openspiel_ismcts_plays_real_states():
    """OpenSpiel's Python ISMCTSBot, with no resampler given, plays a game of hands for one seat against random
    players: it resamples the real states through resample_from_infostate (and asserts the keys agree)."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = _load(rules="woburn", episode="game", max_hands=2)
    random_state = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, random_state), uct_c=4.0, max_simulations=4, random_state=random_state
    )
    rng = random.Random(1)
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
        elif state.current_player() == 1:
            action = int(bot.step(state))
            assert action in state.legal_actions()
            state.apply_action(action)
            searched += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert searched > 16 and sum(state.returns()) == 0


def test_openspiel_demo_ismcts_plays_a_hand():
    """training/evaluation/openspiel_demo.py: ISMCTS for one seat against the heuristic on a dealt hand (a smoke
    check; the figures come from running the script)."""
    from training.evaluation import openspiel_demo as script

    game = script.load("standard")
    bot = script.ismcts_bot(game, simulations=4, uct_c=4.0, seed=1)
    balances = script.play_hand(game, 11, {0: bot})
    assert sum(balances) == 0 and len(balances) == 3
