"""The batched engine (sm_env.compiled.batch) against the reference Game, in lockstep.

The 10,000-game version of the lockstep check is ``benchmarks/lockstep_vector.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from sm_env import replay
from sm_env.compiled import kernels as k
from sm_env.compiled.batch import VectorActionError, VectorGame, supported_presets, unsupported_options
from sm_env.compiled.lockstep import LockstepError, lockstep
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RuleSet
from sm_env.observation import encode
from sm_env.records import game_record


def _random_actions(game: VectorGame, rng: np.random.Generator) -> np.ndarray:
    mask = game.legal_mask()
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask], dtype=np.int64)


@pytest.mark.parametrize("preset", supported_presets())
def test_lockstep_every_preset(preset: str) -> None:
    # fixed-N presets need N hands to end by the rules; the others are cut at 3 hands (truncation tested too).
    # A small sample for CI; benchmarks/lockstep_vector.py runs 10,000 games.
    fixed = PRESETS[preset].fixed_hands
    max_hands = fixed + 1 if fixed else 3
    games = 3 if fixed else 24
    result = lockstep(preset, num_games=games, num_slots=3 if fixed else 8, seed=3, max_hands=max_hands)
    assert result.games >= games and result.hands > games


@pytest.mark.parametrize("preset", ["standard", "woburn", "6-3-8", "woburn-auction", "calls", "four-5-3-2-2"])
def test_lockstep_every_seat_observation(preset: str) -> None:
    lockstep(preset, num_games=4, num_slots=4, seed=5, max_hands=3, all_seats=True, pass_rate=0.3)


def test_lockstep_whole_calls_games_end_after_hand_18() -> None:
    result = lockstep("calls", num_games=3, num_slots=3, seed=8, max_hands=30, all_seats=True)
    assert result.hands == 18 * result.games  # every seat makes its six calls, then the highest score wins


def test_lockstep_parallel_kernels() -> None:
    lockstep("woburn", num_games=12, num_slots=8, seed=2, max_hands=3, parallel=True)


@pytest.mark.parametrize("preset", ["standard", "6-3-8"])
def test_lockstep_hand_episodes(preset: str) -> None:
    result = lockstep(preset, num_games=40, num_slots=20, seed=7, episode="hand", max_hands=100)
    assert result.hands == result.games  # one hand per episode


def test_lockstep_detects_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    # a reference that differs (another first dealer) must be caught
    original = VectorGame.deals

    def shifted(self: VectorGame, slot: int, num_hands: int, finished: bool = False):
        first, deals = original(self, slot, num_hands, finished)
        return (first + 1) % 3, deals

    monkeypatch.setattr(VectorGame, "deals", shifted)
    with pytest.raises(LockstepError):
        lockstep("standard", num_games=2, num_slots=2, max_hands=2)


def test_lockstep_detects_a_full_state_that_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    original = VectorGame.full_state

    def without_the_kitty(self: VectorGame, *args, **kwargs):
        out = original(self, *args, **kwargs)
        out[:, -52:] = 0.0
        return out

    monkeypatch.setattr(VectorGame, "full_state", without_the_kitty)
    with pytest.raises(LockstepError, match="full state"):
        lockstep("standard", num_games=2, num_slots=2, max_hands=2)


def _order_of(rules: dict) -> dict[int, int]:
    """The hand-order entries of the rule vector of ``rules``."""
    cfg = k.rules_config(RuleSet(**rules), None)
    return {c: int(cfg[c]) for c in range(k.K_NSTAGES, k.K_ORDER + 8)}


@pytest.mark.parametrize(
    "rules, planted",
    [
        ("chips-12", {k.K_CHIPS: 0}),  # chips scored as balances
        ("dealer-makes-quota-up", {k.K_DEALER_MAKES: 1}),  # "up" read as "at least its quota"
        ("3-5-9", {k.K_KITTY_TRICK: 0}),  # no kitty trick
        ("3-5-9", {k.K_FIRST_UP: 0}),  # the usual exchange order
        ({"trump_before_exchange": True}, _order_of({})),  # trump after the exchange
        ({"trump_after_send": True}, _order_of({})),  # returns at once
        ("9-2-5-variation", _order_of({"pickup_before_discard": True, "trump_after_send": True})),  # kitty after
        ("dealer-assigns", {k.K_ASSIGN: 0, **_order_of({})}),  # the quotas by role, no assignment
        ("9-5-3-one-card", {k.K_NSTAGES: 2}),  # nobody is asked to take the face-up card
        ("woburn-auction", {k.K_AUCTION: 0}),  # no auction: hand 1 dealt by the first dealer
        ("calls", {k.K_CALLS: 0}),  # calls as trumps: never used up, no NT or misère
        ("four-6-3-2-1", {k.K_Q + 1: 2, k.K_Q + 2: 3}),  # four players: the eldest's and the third's quotas swapped
        ({"players": 4, "max_exchange": 1}, {k.K_MAX_EXCHANGE: -1}),  # four players: the exchange not capped
        ({"players": 4, "first_up_exchanges_first": True}, {k.K_FIRST_UP: 0}),  # four players: the usual order
    ],
    ids=[
        "chips",
        "dealer-makes-up",
        "kitty-trick",
        "first-up",
        "trump-before",
        "trump-after-send",
        "kitty-before",
        "dealer-assigns",
        "one-card-kitty",
        "auction",
        "calls",
        "four-quotas",
        "four-max-exchange",
        "four-first-up",
    ],
)
def test_lockstep_catches_a_section_10_option_played_wrongly(rules, planted: dict[int, int]) -> None:
    def run(plant: bool) -> None:
        vec = VectorGame(8, rules=rules, seed=4, max_hands=6)
        vec.reset()
        for column, value in planted.items() if plant else ():
            vec._cfg[column] = value  # the kernels play the option's effect wrongly from the first decision on
        lockstep(num_games=8, replay_every=0, vec=vec)

    run(False)  # the option played right passes
    with pytest.raises(LockstepError):
        run(True)


@pytest.mark.parametrize(
    "rules",
    [
        {"auction": True, "dealer_makes_quota": True},
        {"auction": True, "first_up_exchanges_first": True, "trump_after_send": True},
        {"auction": True, "chips": True, "target_score": 10},
        {"calls": True, "chips": True, "win_margin": 3},
        {"calls": True, "dealer_makes_quota": "up", "pickup_before_discard": True},
    ],
    ids=["auction-dealer-makes", "auction-first-up", "auction-chips", "calls-chips-margin", "calls-dealer-makes-up"],
)
def test_lockstep_the_auction_and_the_calls_with_other_options(rules: dict) -> None:
    result = lockstep(rules, num_games=6, num_slots=6, seed=5, max_hands=8, pass_rate=0.4 if "auction" in rules else 0)
    assert result.games >= 6 and result.hands > 6


@pytest.mark.parametrize(
    "rules",
    [
        {"players": 4, "chips": True, "win_tricks": None, "target_score": 6, "target_symmetric": True},
        {"players": 4, "trump_after_send": True, "first_up_exchanges_first": True, "max_exchange": 2},
        {"players": 4, "trump_before_exchange": True, "pickup_before_discard": True, "dealer_makes_quota": "up"},
        {"players": 4, "kitty_before_exchange": True, "trump_after_kitty": True, "win_margin": 3, "win_tricks": None},
        {"players": 4, "quotas": [0, 0, 12, 0], "fixed_hands": 5, "win_tricks": None},
    ],
    ids=["four-chips-target", "four-after-send", "four-trump-before", "four-kitty-before", "four-lopsided-quotas"],
)
def test_lockstep_four_players_with_other_options(rules: dict) -> None:
    result = lockstep(rules, num_games=6, num_slots=6, seed=5, max_hands=8, pass_rate=0.4 if "auction" in rules else 0)
    assert result.games >= 6 and result.hands > 6


def test_passed_out_deals_are_no_hands_played() -> None:
    # with fixed_hands 3 a game ends after three hands played, however many deals were passed out before hand 1
    rules = {"auction": True, "fixed_hands": 3}
    vec = VectorGame(8, rules=rules, seed=6, max_hands=20)
    vec.reset()
    result = lockstep(num_games=24, vec=vec, pass_rate=0.6)
    assert result.games >= 24 and result.passed_out >= 5
    assert result.hands >= 3 * result.games  # each finished game: three hands played (games in play add more)

    def planted(vec: VectorGame) -> None:
        vec._st[:, k.S_PASSED_OUT] += 1  # a passed-out deal nobody played
        vec._st[:, k.S_HAND_NO] += 1

    vec = VectorGame(8, rules=rules, seed=6, max_hands=20)
    vec.reset()
    planted(vec)
    with pytest.raises(LockstepError):
        lockstep(num_games=8, vec=vec, replay_every=0)


def test_assignments_have_74_actions_and_their_own_observation_entries() -> None:
    g = VectorGame(4, rules="dealer-assigns", seed=3)
    g.reset()
    assert (g.num_actions, g.observation_size) == (74, 791)
    mask = g.legal_mask()
    assert mask.shape == (4, 74) and np.all(mask[:, 68:74] == 1) and mask[:, :68].sum() == 0  # the assign phase
    obs = g.observe()
    assert np.all(obs[:, 789] == 1.0) and np.all(obs[:, 790] == 0.0)  # assigning, quotas not known yet
    with pytest.raises(ValueError, match=r"shape \(4, 74\)"):
        g.legal_mask(out=np.zeros((4, 56), dtype=np.int8))
    with pytest.raises(VectorActionError, match="quotas 8-5-3"):
        g.step(np.zeros(4, dtype=np.int64))  # a card in the assign phase: the legal assignments are named
    g.step(np.full(4, 73))  # 3-5-8: the dealer takes 3
    assert g.observe()[:, 790].tolist() == [1.0] * 4


def test_same_seed_same_games_whatever_the_other_slots() -> None:
    a = VectorGame(3, seed=11, max_hands=3)
    b = VectorGame(5, seed=11, max_hands=3)
    a.reset()
    b.reset()
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(1)
    for _ in range(150):
        actions_a = _random_actions(a, rng_a)
        actions_b = _random_actions(b, rng_b)
        actions_b[1] = actions_a[1]  # slot 1 plays the same actions in both
        a.step(actions_a)
        b.step(actions_b)
    assert a.record(1) == b.record(1)
    assert a.record(0) != b.record(0)
    c = VectorGame(3, seed=12, max_hands=3)
    c.reset()
    assert c.record(1)["hands"][0]["deal"] != a.deals(1, 1)


def test_reset_with_seed_restarts_the_streams() -> None:
    g = VectorGame(4, seed=1)
    g.reset()
    first = [g.record(i) for i in range(4)]
    g.step(_random_actions(g, np.random.default_rng(0)))
    g.reset(seed=1)
    assert [g.record(i) for i in range(4)] == first
    g.reset()  # no seed: the streams go on, new games
    second = [g.record(i) for i in range(4)]
    assert all(a["hands"][0]["deal"] != b["hands"][0]["deal"] for a, b in zip(first, second, strict=True))
    h = VectorGame(4, seed=1)
    h.reset()
    h.reset()
    assert [h.record(i) for i in range(4)] == second
    g.reset(seed=2)
    assert [g.record(i) for i in range(4)] != first


def _first_deals(seed: int | None, slots: int = 3) -> list[dict]:
    g = VectorGame(slots, seed=seed)
    g.reset()
    return [g.deals(i, 1)[1][0] for i in range(slots)]


def test_every_bit_of_the_seed_counts() -> None:
    """Seeds are the integers Game takes, |seed| < 2**128: none is folded onto another (seeding.py)."""
    s = 12345
    for a, b in ((s, s + 2**64), (s + 2**64, s + 2**65), (-s, 2**64 - s), (-s, s), (2**127 + s, 2**127 + s + 2**64)):
        assert _first_deals(a) != _first_deals(b), (a, b)
    assert _first_deals(2**64 + s) == _first_deals(2**64 + s)  # a big seed still gives the same games
    g = VectorGame(2, seed=s)
    g.reset()
    assert np.array_equal(g._rng_start[:, 0], k.slot_states(np.uint64(s), 2))  # seeds below 2**64: deals unchanged
    for bad in (2**128, -(2**128), 2**200):
        with pytest.raises(ValueError, match=r"^seed has \d+ bits; integer seeds must lie strictly between") as caught:
            VectorGame(2, seed=bad)
        assert "\n" not in str(caught.value)
        with pytest.raises(ValueError, match="strictly between -2\\*\\*128 and 2\\*\\*128"):
            g.reset(seed=bad)
    assert g.seed == s  # a refused seed changed nothing


def test_an_unseeded_batch_draws_128_bits() -> None:
    seeds = [VectorGame(1).seed for _ in range(32)]
    assert all(0 <= seed < 2**128 for seed in seeds)
    assert max(seed.bit_length() for seed in seeds) > 64  # 63 bits before; all 32 below 2**64: odds 2**-2048


@pytest.mark.parametrize("seed", [2**64 + 3, 2**128 - 1, -(2**64) - 3, -7])
def test_seeds_beyond_64_bits_play_in_lockstep_with_the_reference(seed: int) -> None:
    """VectorGame deals with its own generator (not Game(seed)'s); Game(deals=g.deals(...)) is the same game."""
    vec = VectorGame(4, seed=seed, max_hands=3)
    vec.reset()
    lockstep(vec=vec, num_games=4, seed=0)


def test_illegal_action_raises_and_nothing_moves() -> None:
    g = VectorGame(4, seed=2)
    g.reset()
    actions = _random_actions(g, np.random.default_rng(0))
    mask = g.legal_mask()
    illegal = int(np.flatnonzero(mask[2] == 0)[0])
    actions[2] = illegal
    before = (g._st.copy(), g._cm.copy(), g._rng.copy())
    with pytest.raises(VectorActionError, match="slot 2"):
        g.step(actions)
    with pytest.raises(VectorActionError, match="out of range|action ids"):
        g.step(np.full(4, 99))
    with pytest.raises(VectorActionError, match="shape"):
        g.step(actions[:3])
    with pytest.raises(VectorActionError, match="integer"):
        g.step(actions.astype(np.float64))
    assert all(np.array_equal(x, y) for x, y in zip(before, (g._st, g._cm, g._rng), strict=True))


def test_use_before_reset_and_bad_arguments() -> None:
    g = VectorGame(2)
    with pytest.raises(RuntimeError, match="reset"):
        g.legal_mask()
    with pytest.raises(ValueError, match="num_games"):
        VectorGame(0)
    with pytest.raises(ValueError, match="episode"):
        VectorGame(2, episode="trick")
    with pytest.raises(ValueError, match="max_hands"):
        VectorGame(2, max_hands=0)
    g.reset()
    with pytest.raises(ValueError, match="slot"):
        g.record(2)
    with pytest.raises(ValueError, match="done"):
        g.finished_record(0)


def test_active_slots_only_move() -> None:
    g = VectorGame(3, seed=4)
    g.reset()
    before = [g.record(i) for i in range(3)]
    actions = _random_actions(g, np.random.default_rng(0))
    actions[1] = -1  # ignored: slot 1 is not active
    g.step(actions, active=np.array([True, False, True]))
    after = [g.record(i) for i in range(3)]
    assert after[1] == before[1]
    assert after[0] != before[0] and after[2] != before[2]


def test_records_replay_mid_game_and_observations_match() -> None:
    g = VectorGame(4, rules="woburn", seed=9, max_hands=6)
    g.reset()
    rng = np.random.default_rng(3)
    for _ in range(230):
        g.step(_random_actions(g, rng))
    obs = g.observe()
    for i in range(4):
        record = g.record(i)
        replay(record)
        game = g.game(i)
        assert game_record(game) == record
        expected = encode(player_view(game, game.current))
        assert np.array_equal(obs[i].view(np.uint32), expected.view(np.uint32))


def test_deals_feed_the_reference_game() -> None:
    g = VectorGame(2, rules="6-3-8", seed=5)
    g.reset()
    first, deals = g.deals(0, 2)
    game = Game("6-3-8", first_dealer=first, deals=deals, max_hands=100)
    assert game_record(game) == g.record(0)
    assert all(0 not in hand for hand in deals[0]["hands"]) and deals[0]["kitty"] == []


def test_rule_sets_not_supported_are_refused_by_name() -> None:
    # every preset runs compiled; a rule set with a field the support tables do not classify is refused by name
    import dataclasses

    assert supported_presets() == sorted(PRESETS)

    @dataclasses.dataclass(frozen=True)
    class Extended(RuleSet):
        new_option: bool = False

    assert unsupported_options(Extended()) == ["new_option (not classified for the compiled engine)"]
    with pytest.raises(ValueError, match=r"uses new_option \(not classified .+\), which the compiled engine does not"):
        VectorGame(num_games=2, rules=Extended(), seed=0)


@pytest.mark.parametrize("name", ["four-5-3-2-2", "four-6-3-2-1"])
def test_four_players_have_four_seats_everywhere_and_search_runs_compiled(name) -> None:
    from agents.search.rollout import compiled_rollouts
    from agents.search.rollout_kernel import RolloutBatch

    g = VectorGame(num_games=3, rules=name, seed=0, max_hands=2)
    g.reset()
    assert unsupported_options(PRESETS[name]) == [] and g.num_players == 4
    assert g.observe().shape == (3, 1016) and g.legal_mask().shape == (3, 56)
    assert g.full_state().shape == (3, g.full_state_size) == (3, 208) and g.scores.shape == (3, 4)
    assert g.observe(seats=np.full(3, 3)).shape == (3, 1016)
    with pytest.raises(ValueError, match="seats must be 0, 1, 2, 3"):
        g.observe(seats=np.full(3, 4))
    first, deals = g.deals(0, 1)
    assert [len(hand) for hand in deals[0]["hands"]] == [12, 12, 12, 12] and len(deals[0]["kitty"]) == 4
    hidden = g.full_state(rows=[0], seats=[first])[0]  # the hands left of the dealer, across, right; the kitty
    for r, part in enumerate(np.split(hidden, 4)):
        cards = set(np.flatnonzero(part).tolist())
        assert cards == set(deals[0]["hands"][(first + r + 1) % 4] if r < 3 else deals[0]["kitty"])
    rng = np.random.default_rng(0)
    total = np.zeros((3, 4))
    for _ in range(400):
        rewards, _done = g.step(_random_actions(g, rng))
        assert rewards.shape == (3, 4)
        total += rewards
    assert total.any() and (total.sum(axis=1) == 0).all()  # zero-sum hands (quotas sum to the 12 tricks)
    assert compiled_rollouts(PRESETS[name]) is RolloutBatch  # pimc and ismcts search compiled (test_search_kernel)


@pytest.mark.parametrize(
    ("module", "calls"),
    [
        ("sm_env.compiled.single", {"kernels.py", "twister.py"}),
        ("sm_env.compiled.state_check", {"kernels.py"}),
        ("agents.search.rollout_kernel", {"kernels.py", "heuristic.py", "game.py"}),
        ("agents.search.ismcts_kernel", {"kernels.py", "rollout_kernel.py", "heuristic.py", "world_kernel.py"}),
        ("agents.search.policy_kernel", {"kernels.py"}),
        ("agents.search.world_kernel", {"twister.py"}),
    ],
)
def test_modules_compiled_with_the_kernels_key_their_cache_to_the_code_they_call(module: str, calls: set[str]) -> None:
    # numba's cache of a function is keyed by the stamp of its own file, yet holds the code of the kernels it
    # calls and their layout constants: each module that calls them keys the cache of its functions to the
    # contents of every file its compiled code comes from (sm_env.compiled.cache_key), so that a change of
    # kernels.py (or of the heuristic's rules) compiles it again instead of loading a stale cache
    import importlib
    from pathlib import Path

    from numba.core.dispatcher import Dispatcher

    from sm_env.compiled.cache_key import compiled_sources, sources_stamp

    names = vars(importlib.import_module(module))
    namespaces = [names, names["_rules"]] if module.endswith("rollout_kernel") else [names]
    for namespace in namespaces:
        assert calls | {Path(names["__file__"]).name} <= {path.name for path in compiled_sources(namespace)}
        own = [v for v in namespace.values() if isinstance(v, Dispatcher) and v.py_func.__globals__ is namespace]
        stamp = ("sources", sources_stamp(namespace))
        assert own and all(v._cache._cache_file._source_stamp == stamp for v in own), module


def test_the_game_columns_come_before_the_finished_game_ones() -> None:
    # set_state checks every column below S_FIN_LOG_LEN against a replay, and a new game clears them
    columns = {name: getattr(k, name) for name in dir(k) if name.startswith("S_") and isinstance(getattr(k, name), int)}
    last = max(v for name, v in columns.items() if not name.startswith("S_FIN_"))
    assert last < k.S_FIN_LOG_LEN and max(columns.values()) < k.NUM_S


@pytest.mark.parametrize("divisor", [10, 17, 18, 20, 100])
def test_observation_scales_multiply_to_the_same_float32_as_the_divisions(divisor: int) -> None:
    # the observation kernel writes x * (1 / d) where the reference (sm_env.observation) writes x / d: equal
    # once rounded to float32 for every whole x far beyond the reachable counts, scores and hand numbers
    x = np.arange(-(2**20), 2**20, dtype=np.float64)
    scale = getattr(k, f"_BY{divisor}")
    assert np.array_equal((x * scale).astype(np.float32), (x / divisor).astype(np.float32))
    assert not np.array_equal((x * np.float32(1 / divisor)).astype(np.float32), (x / divisor).astype(np.float32))


def test_random_legal_picks_the_kth_legal_action_of_each_row() -> None:
    # k = (s >> 32) * n >> 32 of the row's next xorshift64 number s, among the n legal actions in id order; a row
    # without a legal action gets -1 (masks of 56 and 74 actions: the bit set spans two words)
    rng = np.random.default_rng(5)
    for width in (56, 74):
        mask = (rng.random((300, width)) < rng.random((300, 1))).astype(np.int8)
        mask[0] = 0
        mask[1] = 0
        mask[1, width - 1] = 1
        state = rng.integers(1, 2**63, size=300, dtype=np.uint64)
        expected_state = state.copy()
        expected = []
        for i in range(300):
            s = int(expected_state[i])
            s ^= (s << 13) & (2**64 - 1)
            s ^= s >> 7
            s ^= (s << 17) & (2**64 - 1)
            expected_state[i] = s
            legal = np.flatnonzero(mask[i])
            expected.append(int(legal[((s >> 32) * len(legal)) >> 32]) if len(legal) else -1)
        out = np.zeros(300, dtype=np.int64)
        k.random_legal(mask, state, out)
        assert out.tolist() == expected and np.array_equal(state, expected_state)
        assert out[0] == -1 and out[1] == width - 1


def test_views_and_one_broadcast_seat_reach_the_kernels_as_the_contiguous_arrays_they_are_compiled_for() -> None:
    """A slice of rows or one seat for every row gives the same observation as the plain arrays, and reaches the
    kernels as C-contiguous writable int64 arrays (else numba compiles a second specialisation on first use)."""
    games = VectorGame(6, seed=4)
    games.reset()
    every = np.arange(6, dtype=np.int64)
    view, plain = every[::2], np.array([0, 2, 4], dtype=np.int64)
    np.testing.assert_array_equal(games.observe(rows=view, seats=1), games.observe(rows=plain, seats=[1, 1, 1]))
    np.testing.assert_array_equal(games.full_state(rows=view, seats=2), games.full_state(rows=plain, seats=[2] * 3))
    for kernel in (k.observe_games, k.full_state_games):
        layouts = [str(signature) for signature in kernel.signatures]
        assert layouts and not any("'A'" in text or "True, aligned" in text for text in layouts), layouts
