"""pimc counting the game (``pimc:game=W``; agents/search/pimc.py, rollout.py, rollout_kernel.py,
policy_rollout.py): a searched value is the hand's balance plus W times the seat's result reward where the hand's
end wins the game (sm_env.core.episode.result_rewards, by winner bits: result_table), from ``game_from`` tricks
on. Checked against the engine's own end of game, compiled against Python, and for what the gate leaves alone."""

from __future__ import annotations

import pytest

from agents import AgentSpecError, make_agent
from agents.players.heuristic import heuristic_action
from agents.players.unseen import deck_of
from agents.search.pimc import DEFAULT_GAME_FROM, PimcAgent
from agents.search.rollout import played_out_value, rollout
from sm_env.core.episode import result_rewards, result_table
from sm_env.core.game import OVER, PLAY, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet

STANDARD = RuleSet.from_any("standard")


def _late_positions(count: int, least: int = 7):
    """Views of play decisions (a choice to make) where some seat has taken ``least`` tricks and can still
    reach 12, from heuristic single hands; the first ``count``."""
    found = []
    seed = 0
    while len(found) < count:
        game = Game(STANDARD, seed=seed, max_hands=1)
        seed += 1
        while game.phase != OVER:
            view = player_view(game, game.current_player)
            left = 16 - game.tricks_played
            reach = any(won >= least and won + left >= 12 for won in game.tricks_won)
            if game.phase == PLAY and reach and view.legal.bit_count() > 1:
                found.append(view)
                break
            game.apply(heuristic_action(view))
    return found


@pytest.mark.parametrize("players", [3, 4])
def test_the_result_table_is_result_rewards_by_winner_bits(players):
    table = result_table(players)
    assert len(table) == 1 << players and table[0] == (0.0,) * players == table[-1]
    for bits, row in enumerate(table):
        winners = [s for s in range(players) if bits >> s & 1]
        assert row == result_rewards(winners, players)
    assert table[0b001][:3] == ((1.0, -0.5, -0.5) if players == 3 else (1.0, -1 / 3, -1 / 3))


def test_a_played_out_hand_pays_its_balance_and_the_weighted_result_where_the_game_is_won():
    won = plain = 0
    for seed in range(60):
        game = Game(STANDARD, seed=seed, max_hands=1)
        rollout(game, deck_of(STANDARD), 0)  # the heuristic plays the whole hand; the hand's end ends the game
        assert game.phase == OVER
        for seat in range(3):
            balance = game.log.balances[seat]
            assert played_out_value(game, seat) == balance and type(played_out_value(game, seat)) is int
            if game.winners:  # somebody took 12 tricks: the game is won
                reward = 1.0 if seat in game.winners else -0.5
                assert played_out_value(game, seat, 8.0) == balance + 8.0 * reward
            else:
                assert played_out_value(game, seat, 8.0) == balance
        won += bool(game.winners)
        plain += not game.winners
    assert won and plain  # both kinds of hand were seen


@pytest.mark.parametrize("rollout_by", ["heuristic", "policy"])
def test_compiled_and_python_values_agree_and_the_term_is_the_mean_result(rollout_by):
    live = 0
    for view in _late_positions(4):
        plain = PimcAgent(seed=3, samples=6, rollout=rollout_by).evaluate(view)
        counted = PimcAgent(seed=3, samples=6, rollout=rollout_by, game=8).evaluate(view)
        python = PimcAgent(seed=3, samples=6, rollout=rollout_by, game=8, kernel=False).evaluate(view)
        heavier = PimcAgent(seed=3, samples=6, rollout=rollout_by, game=16).evaluate(view)
        assert counted == pytest.approx(python)
        for action, value in plain.items():
            term = counted[action] - value  # 8 x the mean result reward over the same deals
            assert heavier[action] - value == pytest.approx(2 * term)
            assert -8.0 - 1e-9 <= term <= 8.0 + 1e-9
            live += abs(term) > 1e-9
    assert live  # some rollouts ended the game


def test_the_gate_keeps_the_balance_alone_until_a_seat_has_taken_game_from_tricks():
    view = _late_positions(1, least=7)[0]
    most = max(view.tricks_won)
    plain = PimcAgent(seed=2, samples=5).evaluate(view)
    assert PimcAgent(seed=2, samples=5, game=8, game_from=most + 1).evaluate(view) == plain
    agent = PimcAgent(seed=2, samples=5, game=8, game_from=most)
    assert agent.game_weight(view) == 8.0 and PimcAgent(seed=2, game=8).game_from == DEFAULT_GAME_FROM


def test_the_gate_closes_once_no_seat_can_reach_the_winning_tricks():
    closed = opened = 0
    agent = PimcAgent(seed=0, game=8, game_from=0)
    for seed in range(6):
        game = Game(STANDARD, seed=seed, max_hands=1)
        while game.phase != OVER:
            view = player_view(game, game.current_player)
            if game.phase == PLAY:
                left = 16 - game.tricks_played
                reachable = any(won + left >= 12 for won in game.tricks_won)
                assert agent.game_weight(view) == (8.0 if reachable else 0.0)
                closed += not reachable
                opened += reachable
            game.apply(heuristic_action(view))
    assert closed and opened


def test_game_only_searches_only_where_the_game_counts():
    views = _late_positions(3, least=7)
    game = Game(STANDARD, seed=1, max_hands=1)
    while game.phase != PLAY or player_view(game, game.current_player).legal.bit_count() < 2:
        game.apply(heuristic_action(player_view(game, game.current_player)))
    early = player_view(game, game.current_player)  # the first card of the hand with a choice
    assert max(early.tricks_won) < DEFAULT_GAME_FROM
    agent = PimcAgent(seed=1, samples=4, game=8, game_only=True)
    assert agent.act(early) == heuristic_action(early) and agent.decisions == 0  # no search: the default move
    for view in views:
        agent.act(view)
    assert agent.decisions == len(views)
    with pytest.raises(ValueError, match="game_only=1 needs game > 0"):
        PimcAgent(0, game_only=True)


def test_where_the_game_is_at_stake_the_counted_search_plays_for_it():
    # with a game worth 1000 tricks the chosen move has the best mean result reward of the legal moves (never a
    # worse one than the plain search's choice), and somewhere a better one: there it gives up balance for the game
    traded = 0
    for view in _late_positions(40, least=7):
        base = PimcAgent(seed=1, samples=8).evaluate(view)
        values = PimcAgent(seed=1, samples=8, game=1000).evaluate(view)
        result = {a: (values[a] - base[a]) / 1000 for a in base}  # each move's mean result reward
        counted, plain = max(values, key=values.get), max(base, key=base.get)
        assert result[counted] == pytest.approx(max(result.values()))
        if result[counted] > result[plain] + 1e-9:
            assert base[counted] <= base[plain]  # the balance it gave up for the game
            traded += 1
    assert traded > 0


@pytest.mark.parametrize(
    "spec, message",
    [
        ("pimc:game=-1", "'game' must be a number from 0 to 1000, got '-1'"),
        ("pimc:game=inf", "'game' must be a number from 0 to 1000, got 'inf'"),
        ("pimc:game=nan", "'game' must be a number from 0 to 1000, got 'nan'"),
        ("pimc:game_from=17", "'game_from' must be a whole number from 0 to 16, got '17'"),
        ("pimc:game_from=2.5", "'game_from' must be a whole number"),
    ],
)
def test_bad_game_values_are_refused_in_one_line(spec, message):
    with pytest.raises(AgentSpecError, match=message) as info:
        make_agent(spec, 0)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"game must be a number in \[0, 1000\], got nan"):
        PimcAgent(0, game=float("nan"))


def test_the_name_says_what_the_search_counts():
    assert make_agent("pimc:rollout=policy,game=8", 0).name == "pimc:rollout=policy,samples=16,game=8"
    assert make_agent("pimc:game=2.5,game_from=6", 0).name == "pimc:samples=20,game=2.5,game_from=6"
    assert make_agent("pimc:game=0", 0).name == "pimc"
    assert make_agent("pimc:game=8,game_only=1", 0).name == "pimc:samples=20,game=8,game_only=1"
