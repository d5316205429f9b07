"""Search on the compiled path: pimc and ismcts give the same values, trees and actions with the kernel
(compiled deal sampling and rollouts) as with the pure-Python reference, for the same seed."""

from __future__ import annotations

import random

import pytest

from agents import make_agent
from agents.players.heuristic import heuristic_action
from agents.search.ismcts import IsmctsAgent
from agents.search.pimc import PimcAgent
from agents.search.rollout import compiled_rollouts
from agents.search.rollout_kernel import RolloutBatch
from agents.search.world_kernel import TwisterStream, compiled_stream
from agents.search.world_sampler import constraints_of, sample_world
from sm_env.core.cards import from_mask
from sm_env.core.game import DISCARD, PLAY, TRUMP, Game
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.rules import PRESETS, RuleSet

RULE_SETS = [*PRESETS, {"pickup_before_discard": True, "trump_after_kitty": True}]


def decisions(rules, count: int, seed: int) -> list[PlayerView]:
    """Views of searched decisions (trump, discard, play with two or more legal actions) from heuristic games
    of one to three hands: every naming of trump, every fourth other one."""
    rng = random.Random(seed)
    views: list[PlayerView] = []
    while len(views) < count:
        game = Game(rules, seed=rng.randrange(10**9), max_hands=rng.randint(1, 3))
        while not game.is_over:
            view = player_view(game, game.current_player)
            searched = game.phase in (TRUMP, DISCARD, PLAY) and len(from_mask(view.legal)) > 1
            if searched and (game.phase == TRUMP or rng.random() < 0.25):
                views.append(view)
            game.apply(heuristic_action(view))
    return views[:count]


def tree(root) -> dict:
    """A search tree as nested dicts: action -> (player, visits, availability, total, subtree)."""
    return {a: (n.player, n.visits, n.avail, n.total, tree(n)) for a, n in sorted(root.children.items())}


def test_the_kernel_is_a_spec_parameter():
    assert make_agent("pimc").kernel and make_agent("ismcts").kernel
    python = make_agent("pimc:kernel=0")
    assert not python.kernel and python.name == "pimc:samples=20,kernel=0"
    assert make_agent("ismcts:iterations=50,kernel=off").name == "ismcts:iterations=50,kernel=0"


def test_the_kernel_plays_every_preset():
    assert all(compiled_rollouts(rules) is RolloutBatch for rules in PRESETS.values())  # four players included


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_pimc_kernel_gives_the_python_values_and_actions(rules):
    for i, view in enumerate(decisions(rules, 10, seed=len(str(rules)))):
        compiled, python = PimcAgent(seed=i, samples=6, bid=True), PimcAgent(seed=i, samples=6, bid=True, kernel=False)
        assert compiled.evaluate(view) == python.evaluate(view), f"decision {i}: {view.phase=}"
        assert compiled.act(view) == python.act(view)
        assert compiled.rng.getstate() == python.rng.getstate()  # both drew the same numbers
        assert (compiled.decisions, compiled.worlds) == (python.decisions, python.worlds)


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_ismcts_kernel_grows_the_python_tree(rules):
    for i, view in enumerate(decisions(rules, 8, seed=len(str(rules)))):
        compiled = IsmctsAgent(seed=i, iterations=50, bid=True, c=0.3 + 0.1 * (i % 3))
        python = IsmctsAgent(seed=i, iterations=50, bid=True, c=0.3 + 0.1 * (i % 3), kernel=False)
        assert tree(compiled.search(view)) == tree(python.search(view)), f"decision {i}"
        assert compiled.act(view) == python.act(view)
        assert compiled.rng.getstate() == python.rng.getstate()


def test_planted_seat_bugs_in_four_player_search_are_caught(monkeypatch):
    """The compiled search on four players: a sampled deal's across hand given to the right seat (the sampler), or
    written into the right seat's row (the ISMCTS kernel's row of a deal), changes the values and the tree."""
    from agents.search import ismcts_kernel, world_kernel
    from agents.search.world_sampler import World

    views = decisions("four-5-3-2-2", 3, seed=1)

    def same(kernel_agents) -> bool:
        for i, view in enumerate(views):
            pimc = [PimcAgent(seed=i, samples=6, kernel=k).evaluate(view) for k in kernel_agents]
            ismcts = [tree(IsmctsAgent(seed=i, iterations=50, kernel=k).search(view)) for k in kernel_agents]
            if pimc[0] != pimc[1] or ismcts[0] != ismcts[1]:
                return False
        return True

    assert same((True, False))
    sample = world_kernel.TwisterStream.sample_world

    def right_is_across(stream, view_hand, cons):
        world = sample(stream, view_hand, cons)
        hands = list(world.hands)
        hands[cons.seats[1]], hands[cons.seats[2]] = hands[cons.seats[2]], hands[cons.seats[1]]
        return World(tuple(hands), world.kitty, world.out)

    with monkeypatch.context() as patch:
        patch.setattr(world_kernel.TwisterStream, "sample_world", right_is_across)
        assert not same((True, False))
    build = ismcts_kernel.CompiledTree.__init__

    def across_into_right(tree_, *args):
        build(tree_, *args)
        tree_.world[10] = tree_.world[3]  # the across hand written into the right seat's column

    with monkeypatch.context() as patch:
        patch.setattr(ismcts_kernel.CompiledTree, "__init__", across_into_right)
        assert not same((True, False))


def test_later_calls_search_only_the_calls_left_on_both_paths():
    rng = random.Random(4)
    views = []
    while len(views) < 6:  # a call to make after the dealer's first hands: some calls used up
        game = Game("calls", seed=rng.randrange(10**9), max_hands=18)
        while not game.is_over:
            view = player_view(game, game.current_player)
            if game.phase == TRUMP and game.calls_left[game.dealer].bit_count() in (2, 3, 4):
                views.append(view)
                break
            game.apply(heuristic_action(view))
    for i, view in enumerate(views):
        compiled, python = (
            IsmctsAgent(seed=i, iterations=40, bid=True),
            IsmctsAgent(seed=i, iterations=40, bid=True, kernel=False),
        )
        root = compiled.search(view)
        assert tree(root) == tree(python.search(view)), f"decision {i}"
        assert {a - 52 for a in root.children} == set(from_mask(view.calls_left[view.seat]))
        pimc = PimcAgent(seed=i, samples=4, bid=True)
        assert pimc.evaluate(view) == PimcAgent(seed=i, samples=4, bid=True, kernel=False).evaluate(view)


def test_a_large_tree_is_the_same_too():
    view = decisions("standard", 1, seed=9)[0]
    compiled, python = IsmctsAgent(seed=1, iterations=600), IsmctsAgent(seed=1, iterations=600, kernel=False)
    root = compiled.search(view)
    assert tree(root) == tree(python.search(view))
    assert root.visits == 600 and compiled.total_iterations == python.total_iterations == 600


def test_a_time_budget_searches_on_the_kernel_too():
    view = decisions("standard", 1, seed=5)[0]
    agent = PimcAgent(seed=0, seconds=1e-6)
    values = agent.evaluate(view)
    assert set(values) == set(from_mask(view.legal)) and agent.worlds >= 1
    assert IsmctsAgent(seed=0, seconds=1e-6).search(view).visits >= 1


@pytest.mark.parametrize("rules", ["woburn", "four-6-3-2-1"])
def test_the_stream_draws_what_random_draws(rules):
    views = decisions(rules, 8, seed=3)
    reference, copied = random.Random(7), random.Random(7)
    stream = TwisterStream(copied)
    for k, view in enumerate(views):
        cons = constraints_of(view)
        for j in range(40):  # enough draws to run through the generator's 624-word state several times
            assert stream.sample_world(view.hand, cons) == sample_world(view, reference, cons)
            n = 1 + (k * 977 + j * 131) % 5000
            assert stream.randrange(n) == reference.randrange(n)
            assert stream.randrange(2**32 - 1 - j) == reference.randrange(2**32 - 1 - j)  # every bit counts
    assert copied.getstate() != reference.getstate()  # not written back yet
    stream.close()
    assert copied.getstate() == reference.getstate()
    assert copied.random() == reference.random()
    with pytest.raises(ValueError, match="randrange"):
        stream.randrange(0)


def test_only_a_plain_random_is_copied():
    class Loaded(random.Random):
        def random(self) -> float:
            return 0.5

    assert compiled_stream(Loaded(1)) is None
    with pytest.raises(TypeError, match="random.Random"):
        TwisterStream(Loaded(1))
    assert isinstance(compiled_stream(random.Random(1)), TwisterStream)


def test_a_rule_the_kernel_does_not_know_falls_back_to_python(monkeypatch):
    import agents.search.rollout_kernel as kernel
    from sm_env.compiled import support

    rules = RuleSet(win_margin=5)
    assert compiled_rollouts(rules) is kernel.RolloutBatch
    monkeypatch.delitem(support.MAPPED, "win_margin")  # a field the tables do not classify: nothing runs compiled
    assert compiled_rollouts(rules) is None and compiled_rollouts(RuleSet()) is None
    monkeypatch.setitem(support.REFUSED, "win_margin", None)  # refused: only its default runs compiled
    assert compiled_rollouts(rules) is None
    assert compiled_rollouts(RuleSet()) is kernel.RolloutBatch
    monkeypatch.delitem(support.REFUSED, "win_margin")
    monkeypatch.setitem(support.MAPPED, "win_margin", (support.BOOL, ("K_WIN_MARGIN",)))
    assert compiled_rollouts(rules) is None  # a value of a kind the kernel does not take
    with pytest.raises(ValueError, match="win_margin: 5"):
        kernel.RolloutBatch(rules, 1)
    view = decisions(rules, 1, seed=2)[0]
    assert PimcAgent(seed=3, samples=4).evaluate(view) == PimcAgent(seed=3, samples=4, kernel=False).evaluate(view)


def _call_view(dealer_hand: list[int]) -> PlayerView:
    """The dealer's (seat 0) call in hand 1 of a ``calls`` game where it holds ``dealer_hand``."""
    rest = [c for c in range(52) if c not in dealer_hand]
    deal = {"hands": [dealer_hand, rest[:16], rest[16:32]], "kitty": rest[32:]}
    game = Game("calls", deals=[deal], first_dealer=0, max_hands=1)
    assert game.phase == TRUMP and game.current_player == 0
    return player_view(game, 0)


MIZ_CALL, SPADES_CALL = 57, 55
LOW_CARDS = [suit * 13 + r for suit in range(4) for r in range(4)]  # every 2, 3, 4 and 5: misère is best
SPADES = [*range(39, 52), 0, 13, 26]  # thirteen spades and three deuces: spades is best, no trump worst


@pytest.mark.parametrize(("hand", "best"), [(LOW_CARDS, MIZ_CALL), (SPADES, SPADES_CALL)], ids=["miz", "spades"])
@pytest.mark.parametrize("kernel", [True, False], ids=["compiled", "python"])
def test_the_dealer_call_is_valued_by_its_balance(hand, best, kernel):
    """A misère hand and a suit hand are compared by their balances (maximum - tricks against tricks - quota),
    so search calls misère when the cards make it clearly best (docs/rules.md 10.3)."""
    view = _call_view(hand)
    pimc = PimcAgent(seed=1, samples=8, bid=True, kernel=kernel)
    values = pimc.evaluate(view)
    assert max(values, key=values.get) == best and pimc.act(view) == best, values
    assert all(-8 <= v <= 8 for v in values.values())  # balances, not tricks: a quota of 8, a maximum of 3
    ismcts = IsmctsAgent(seed=1, iterations=120, bid=True, kernel=kernel)
    assert ismcts.act(view) == best
