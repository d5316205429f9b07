"""pimc with policy rollouts (``pimc:rollout=policy``; agents/search/pimc.py, agents/search/policy_rollout.py,
agents/search/policy_kernel.py): the spec, the rollouts really played by the policy (compiled against the Python
reference, and against a planted other player), the searching seat's observation of a sampled position, legal
moves in every decision type, no use of hidden cards, and determinism under a seed."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import make_deal

from agents import AgentSpecError, make_agent
from agents.players.heuristic import heuristic_action
from agents.players.trained import TrainedAgent
from agents.search.pimc import DEFAULT_SAMPLES, POLICY_CHUNK, PimcAgent
from agents.search.policy_rollout import (
    BatchPolicy,
    PolicyRollouts,
    PythonPolicyRollouts,
    policy_rollout,
    with_public_history,
)
from agents.search.world_sampler import World, world_from_view
from sm_env.compiled import kernels as vk
from sm_env.compiled.loader import load_game
from sm_env.core.game import BID, DISCARD, EXCHANGE, OVER, PLAY, TRUMP, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet
from sm_env.observation import encode, layout_of, observation_size

PLAYED_PHASES = (TRUMP, DISCARD, PLAY)


def _choices(view) -> int:
    return view.legal.bit_count()


def _positions(rules, seeds, start_balances=None, max_hands=2, every=1):
    """(game, view) at the searchable decisions (trump, discard, play; exchange over; a choice) of heuristic
    games, every ``every``-th one."""
    n = 0
    for seed in seeds:
        game = Game(rules, seed=seed, max_hands=max_hands, start_balances=start_balances)
        while game.phase != OVER:
            view = player_view(game, game.current_player)
            if game.phase in PLAYED_PHASES and not game.exchange_pending and _choices(view) > 1:
                if n % every == 0:
                    yield game.clone(), view
                n += 1
            game.apply(heuristic_action(view))


def _truth(game: Game, seat: int) -> World:
    """The real deal as a sampled world of ``seat`` (what world_from_view takes)."""
    out = 0
    if seat != game.dealer:
        for card in game.log.discards or ():
            out |= 1 << card
    if game.take is not None and game.take[1] is not None and game.take[0] != seat:
        out |= 1 << game.take[1]
    return World(tuple(game.hands), 0 if game.picked_up else game.kitty_mask, out)


def _row_observation(game: Game, seat: int) -> np.ndarray:
    st = np.zeros((1, vk.NUM_S), dtype=np.int32)
    cm = np.zeros((1, vk.NUM_C), dtype=np.uint64)
    load_game(st, cm, 0, game)
    out = np.zeros((1, observation_size(game.rules)), dtype=np.float32)
    cfg = vk.rules_config(game.rules, None)
    vk.observe_games(st, cm, cfg, np.array([seat], dtype=np.int64), np.array([0], dtype=np.int64), out)
    return out[0]


# ---------------------------------------------------------------------------- the spec


def test_the_spec_builds_a_policy_search_with_its_own_default_budget():
    agent = make_agent("pimc:rollout=policy", 0)
    assert isinstance(agent, PimcAgent) and agent.rollout == "policy" and agent.samples == DEFAULT_SAMPLES["policy"]
    assert agent.name == "pimc:rollout=policy" and agent.needs_observation
    assert make_agent("pimc:rollout=Policy,samples=4", 0).name == "pimc:rollout=policy,samples=4"
    plain = make_agent("pimc:rollout=heuristic", 0)
    assert plain.name == "pimc" and plain.samples == 20 and not plain.needs_observation
    assert make_agent("pimc:rollout=policy,seconds=0.5,bid=1", 0).name == "pimc:rollout=policy,seconds=0.5,bid=1"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("pimc:rollout=net", "'rollout' must be one of heuristic, policy, got 'net'"),
        ("pimc:rollout=", "'rollout' must be one of heuristic, policy, got ''"),
        ("pimc:rollout=policy,rollout=policy", "parameter 'rollout' given twice"),
        ("pimc:rollout=policy,samples=0", "'samples' must be a whole number from 1 to 10000"),
        ("ismcts:rollout=policy", r"unknown parameter\(s\) \['rollout'\]"),
    ],
)
def test_bad_values_are_refused_in_one_line(spec, message):
    with pytest.raises(AgentSpecError, match=message) as info:
        make_agent(spec, 0)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="rollout must be one of heuristic, policy, got 'random'"):
        PimcAgent(0, rollout="random")


def test_rule_sets_without_a_shipped_policy_are_refused_in_one_line(no_shipped_policy):
    from training.evaluation.evaluate import check_agent

    no_shipped_policy("dealer-assigns", "9-5-3-one-card")
    agent = make_agent("pimc:rollout=policy", 0)
    with pytest.raises(ValueError, match="no shipped policy plays the rule set 'dealer-assigns'") as info:
        agent.check_rules(RuleSet.from_any("dealer-assigns"))
    assert "\n" not in str(info.value) and "standard" in str(info.value)
    with pytest.raises(ValueError, match="agent 'pimc:rollout=policy': no shipped policy"):
        check_agent("pimc:rollout=policy", RuleSet.from_any("9-5-3-one-card"))
    make_agent("pimc", 0).check_rules(RuleSet.from_any("dealer-assigns"))  # heuristic rollouts play any rule set
    agent.check_rules(RuleSet.from_any("calls"))
    assert agent._policy.path.endswith("calls_v1.pt")  # the calls preset's own policy


# ---------------------------------------------------------------------------- the position a rollout starts from


@pytest.mark.parametrize(
    "rules, balances",
    [("standard", [2, -1, -1]), ("standard", [1, 0, -1]), ("standard", [-1, -1, 2]), ("calls", None)],
)
def test_the_searching_seat_observes_a_sampled_position_as_the_real_game(rules, balances):
    # the real deal as the sampled world: the position's observation must be the seat's real one, compiled and
    # in Python, which it is only with the hand's history (the exchanges) that from_position leaves out
    checked = with_exchange = differs_without = 0
    for game, view in _positions(rules, range(3), balances, every=3):
        seat = view.seat
        real = encode(view)
        bare = world_from_view(view, _truth(game, seat))
        differs_without += not np.array_equal(_row_observation(bare, seat), real)
        position = with_public_history(world_from_view(view, _truth(game, seat)), view)
        np.testing.assert_array_equal(_row_observation(position, seat), real)
        np.testing.assert_array_equal(encode(player_view(position, seat)), real)
        # the other seats: all but what the searching seat cannot know (the cards two others exchanged, the
        # kitty cards shown to another, an opponent dealer's kitty) is as in the real game
        hidden = {name for name, _, _ in layout_of(game.rules) if name in ("gave", "got", "shown", "kitty")}
        for other in range(3):
            theirs, truth = encode(player_view(position, other)), encode(player_view(game, other))
            for name, off, size in layout_of(game.rules):
                if name not in hidden:
                    np.testing.assert_array_equal(theirs[off : off + size], truth[off : off + size], err_msg=name)
        checked += 1
        with_exchange += any(ex.sent for ex in view.exchanges)
    assert checked >= 10
    if balances is not None:
        assert with_exchange > 0 and differs_without > 0


# ---------------------------------------------------------------------------- the rollouts are the policy's


def _some_positions(n: int) -> list[tuple[Game, object]]:
    """``n`` positions of the play (the phase pimc always searches), after an exchange."""
    found = (p for p in _positions("standard", range(2), [2, -1, -1], every=7) if p[0].phase == PLAY)
    return [next(found) for _ in range(n)]


def test_compiled_rollouts_play_the_policy_moves():
    agent = TrainedAgent(0)
    batch = BatchPolicy(agent.policy)
    compiled = PolicyRollouts(RuleSet.from_any("standard"), batch)
    reference = PythonPolicyRollouts(agent.choose)
    lowest_card = PythonPolicyRollouts(lambda obs, legal: (legal & -legal).bit_length() - 1)  # a planted player
    differs = 0
    for game, view in _some_positions(4):
        legal = [a for a in range(56) if view.legal >> a & 1]
        games = [with_public_history(world_from_view(view, _truth(game, view.seat)), view)]
        values = compiled.values(games, legal, view.seat)
        np.testing.assert_array_equal(values, reference.values(games, legal, view.seat))
        differs += not np.array_equal(values, lowest_card.values(games, legal, view.seat))
    assert differs > 0, "the planted player plays out as the policy: the comparison proves nothing"
    assert batch.calls == compiled.steps > 0 and batch.rows > batch.calls  # one network call per lockstep step


def test_the_batched_forward_is_the_policys():
    agent = TrainedAgent(0)
    games = [game for game, _ in _some_positions(3)]
    obs = np.stack([encode(player_view(g, s)) for g in games for s in range(3)]).astype(np.float32)
    batch = BatchPolicy(agent.policy)
    logits = batch.logits(obs)
    np.testing.assert_allclose(logits, agent.policy.logits(obs), rtol=0, atol=2e-4)
    assert (batch.calls, batch.rows) == (1, len(obs))
    planted = BatchPolicy(agent.policy)
    planted.first = (planted.first[0][::-1].copy(), planted.first[1])  # the inputs read in the wrong order
    assert not np.allclose(planted.logits(obs), logits, atol=1e-2)


def test_the_rollout_values_are_the_policys_not_the_heuristics():
    # the same seed draws the same deals for both searches; the values differ where the players differ
    positions = _some_positions(3)
    differs = 0
    for _game, view in positions:
        policy = PimcAgent(seed=1, samples=2, rollout="policy")
        heuristic = PimcAgent(seed=1, samples=2)
        differs += policy.evaluate(view) != heuristic.evaluate(view)
        rollouts = next(iter(policy._rollouts.values()))
        assert rollouts.policy.calls > 0  # the network played
    assert differs > 0


def test_one_position_in_python_is_played_by_the_policy():
    game, view = _some_positions(1)[0]
    agent = TrainedAgent(0)
    position = with_public_history(world_from_view(view, _truth(game, view.seat)), view)
    asked = []

    def choose(obs, legal):
        asked.append(obs)
        return agent.choose(obs, legal)

    policy_rollout(position, choose)
    assert position.phase == OVER and asked
    assert all(obs.shape == (observation_size(game.rules),) for obs in asked)


# ---------------------------------------------------------------------------- the agent


def test_compiled_and_python_searches_give_the_same_values():
    for _game, view in _some_positions(2):
        compiled = PimcAgent(seed=4, samples=3, rollout="policy").evaluate(view)
        python = PimcAgent(seed=4, samples=3, rollout="policy", kernel=False).evaluate(view)
        assert compiled == python


def test_many_deals_are_rolled_out_in_bounded_chunks_with_the_same_values(monkeypatch):
    import agents.search.policy_rollout as policy_rollout

    _game, view = _some_positions(1)[0]
    whole = PimcAgent(seed=6, samples=5, rollout="policy").evaluate(view)
    sizes = []
    original = policy_rollout.PolicyRollouts._values

    def spy(self, games, actions, seat, game_weight):
        sizes.append(len(games) * len(actions))
        return original(self, games, actions, seat, game_weight)

    monkeypatch.setattr(policy_rollout, "MAX_ROWS", 2 * len(whole))  # two deals' rows per chunk
    monkeypatch.setattr(policy_rollout.PolicyRollouts, "_values", spy)
    chunked = PimcAgent(seed=6, samples=5, rollout="policy").evaluate(view)
    assert chunked == whole
    assert len(sizes) == 3 and max(sizes) <= 2 * len(whole)


def test_same_seed_same_values_and_moves():
    _game, view = _some_positions(1)[0]
    first = PimcAgent(seed=5, samples=4, rollout="policy")
    values, move = first.evaluate(view), first.act(view)
    again = PimcAgent(seed=5, samples=4, rollout="policy")
    assert again.evaluate(view) == values and again.act(view) == move
    again.reset(5)
    assert again.evaluate(view) == values
    assert max(values, key=lambda a: values[a]) in values and move in values


def test_a_forced_move_and_the_phases_not_searched_cost_no_search():
    game = Game(seed=3, first_dealer=0, max_hands=1, start_balances=[2, -1, -1])
    assert game.phase == EXCHANGE
    agent = PimcAgent(seed=0, samples=3, rollout="policy", bid=True)
    trained = TrainedAgent(0)
    view = player_view(game, game.current_player)
    assert agent.act(view) == trained.act(view) and agent.worlds == 0  # the exchange: the policy's own move
    game = Game(seed=3, first_dealer=0, max_hands=1)
    assert game.phase == TRUMP
    view = player_view(game, 0)
    plain = PimcAgent(seed=0, samples=3, rollout="policy")
    assert plain.act(view) == trained.act(view) and plain.worlds == 0  # trump without bid=1: the policy's
    bidding = PimcAgent(seed=0, samples=3, rollout="policy", bid=True)
    bidding.act(view)
    assert bidding.worlds == 3  # trump searched with bid=1
    while game.phase != PLAY or game.legal_mask().bit_count() != 1:
        game.apply(heuristic_action(player_view(game, game.current_player)))
    forced = PimcAgent(seed=0, rollout="policy")
    assert forced.act(player_view(game, game.current_player)) == game.legal_mask().bit_length() - 1
    assert forced.worlds == 0


def test_a_time_budget_plays_whole_chunks():
    _game, view = _some_positions(1)[0]
    agent = PimcAgent(seed=0, seconds=1e-6, rollout="policy")
    agent.act(view)
    assert agent.decisions == 1 and agent.worlds == POLICY_CHUNK


@pytest.mark.parametrize(
    "rules, balances, phases",
    [
        ("standard", [2, -1, -1], {EXCHANGE, TRUMP, DISCARD, PLAY}),
        ("calls", None, {TRUMP, DISCARD, PLAY}),
        ("woburn-auction", None, {BID, TRUMP, DISCARD, PLAY}),
    ],
)
def test_legal_moves_in_every_decision_type(rules, balances, phases):
    game = Game(rules, seed=2, max_hands=1, start_balances=balances)
    agents = [PimcAgent(seed=s, samples=2, rollout="policy", bid=s == 0) for s in range(3)]
    for agent in agents:
        agent.check_rules(game.rules)
    seen = set()
    while game.phase != OVER:
        seat = game.current_player
        view = player_view(game, seat)
        action = agents[seat].act(view)
        assert view.legal >> action & 1, (game.phase, action)
        seen.add(game.phase)
        game.apply(action)
    assert phases <= seen
    assert sum(a.decisions for a in agents) > 10


# ---------------------------------------------------------------------------- hidden cards


def _twin_games():
    """Two games of hand 1 that differ only in cards hidden from seat 1 (the two opponents swap two unplayed cards
    of one suit), at a decision of seat 1 in the play with a choice."""
    deal = make_deal(
        "C:AKQJT9876 D:AKQ H:AK S:AK",
        "C:5432 D:JT984 H:QJT S:QJT4",
        "D:7653 H:987654 S:987653",
        None,
    )
    game = Game(seed=0, first_dealer=0, max_hands=1, deals=[deal])
    actions = []
    while not (game.phase == PLAY and game.current_player == 1 and game.tricks_played >= 2 and game.trick):
        action = heuristic_action(player_view(game, game.current_player))
        actions.append(action)
        game.apply(action)
    dealt = [sum(1 << c for c in deal["hands"][s]) for s in (0, 2)]
    unplayed = [game.hands[0] & dealt[0], game.hands[2] & dealt[1]]  # held since the deal (not the kitty's)
    for suit in range(4):
        mine = [c for c in range(13 * suit, 13 * suit + 13) if unplayed[0] >> c & 1]
        theirs = [c for c in range(13 * suit, 13 * suit + 13) if unplayed[1] >> c & 1]
        if mine and theirs:
            a, b = mine[0], theirs[0]
            break
    swapped = {a: b, b: a}
    other = {"hands": [[swapped.get(c, c) for c in h] for h in deal["hands"]], "kitty": deal["kitty"]}
    twin = Game(seed=0, first_dealer=0, max_hands=1, deals=[other])
    for action in actions:
        twin.apply(action)
    return game, twin


def test_two_deals_alike_from_the_seats_view_get_the_same_search():
    game, twin = _twin_games()
    assert game.hands != twin.hands  # the hidden cards differ
    view, twin_view = player_view(game, 1), player_view(twin, 1)
    np.testing.assert_array_equal(encode(view), encode(twin_view))
    assert _choices(view) > 1
    values = PimcAgent(seed=3, samples=4, rollout="policy").evaluate(view)
    assert PimcAgent(seed=3, samples=4, rollout="policy").evaluate(twin_view) == values
    assert PimcAgent(seed=3, samples=4, rollout="policy").act(view) == PimcAgent(
        seed=3, samples=4, rollout="policy"
    ).act(twin_view)
    rng = random.Random(0)  # and the search really varies with the deals it draws: another seed, other values
    assert any(
        PimcAgent(seed=rng.randrange(1000), samples=4, rollout="policy").evaluate(view) != values for _ in range(4)
    )
