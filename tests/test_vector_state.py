"""VectorGame.set_state checks a state in full before any kernel sees it (sm_env.compiled.state_check)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable

import numpy as np
import pytest

from sm_env.compiled import kernels as k
from sm_env.compiled.batch import VectorGame, VectorStateError
from sm_env.compiled.lockstep import lockstep
from sm_env.records import replay

SLOTS = 6


def _played(steps: int = 150, seed: int = 1, slots: int = SLOTS) -> VectorGame:
    """A batch after ``steps`` random legal steps (max_hands 2: some games have ended and begun again)."""
    g = VectorGame(slots, seed=seed, max_hands=2)
    g.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        g.step(np.array([rng.choice(np.flatnonzero(row)) for row in g.legal_mask()]))
    return g


def _ended() -> VectorGame:
    """A batch right after a step that ended a game in some slot (done set)."""
    g = _played(0)
    rng = np.random.default_rng(2)
    while True:
        _, done = g.step(np.array([rng.choice(np.flatnonzero(row)) for row in g.legal_mask()]))
        if done.any():
            return g


def _copy(state: dict) -> dict:
    return {name: np.array(value, copy=True) for name, value in state.items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[n], b[n]) for n in a)


def _set(column: int, value: int, row: int = 1) -> Callable[[dict], None]:
    return lambda s: s["st"].__setitem__((row, column), value)


TAMPERINGS = {
    "log position 10**6": (_set(k.S_LOG_LEN, 10**6), r"S_LOG_LEN\] \(the log position\) is 1000000"),
    "log position -5": (_set(k.S_LOG_LEN, -5), r"S_LOG_LEN.* is -5; it must be 0\.\.255"),
    "trick length 50": (_set(k.S_TRICK_LEN, 50), r"st\[1, S_TRICK_LEN\] is 50"),
    "trump 9": (_set(k.S_TRUMP, 9), r"st\[1, S_TRUMP\] is 9"),
    "a score": (_set(k.S_SC + 2, 7), r"st\[1, S_SC\+2\] is 7"),
    "a log value 99": (lambda s: s["log"].__setitem__((1, 0), 99), r"log\[1, 0\] = 99 is not a legal action"),
    "a legal-looking log value": (lambda s: s["log"].__setitem__((1, 1), 54), r"log\[1, 1\]|st\[1, "),
    "a short log": (lambda s: s.__setitem__("log", s["log"][:, :2]), r"S_LOG_LEN.*log holds 2 actions"),
    "an empty log": (lambda s: s.__setitem__("log", s["log"][:, :0]), "log has no columns"),
    "NaN state": (lambda s: s.__setitem__("st", np.full(s["st"].shape, np.nan)), "st has dtype float64"),
    "float cards": (lambda s: s.__setitem__("cm", s["cm"].astype(float)), "cm has dtype float64"),
    "st beyond int32": (lambda s: s.__setitem__("st", s["st"].astype(np.int64) + 2**40), "int32 columns"),
    "log beyond int8": (lambda s: s.__setitem__("log", s["log"].astype(np.int64) * 1000), "int8 entries"),
    "a card moved": (lambda s: s["cm"].__setitem__((2, k.C_HAND), s["cm"][2, k.C_HAND] ^ 1), r"cm\[2, C_HAND\]"),
    "a next-deal card": (lambda s: s["cm"].__setitem__((2, k.C_NEXT_KITTY), 1), r"cm\[2, C_NEXT_KITTY\]"),
    "the generator": (lambda s: s["rng"].__setitem__(0, 5), r"rng\[0\] is 5"),
    "the game start": (lambda s: s["rng_start"].__setitem__((0, 0), 5), r"slot 0's game"),
    "rows missing": (
        lambda s: s.__setitem__("st", s["st"][:-1]),
        rf"st has shape \(5, {k.NUM_S}\); this batch of 6 games needs \(6, {k.NUM_S}\)",
    ),
    "an empty seed": (lambda s: s.__setitem__("seed", np.array([], dtype=np.uint64)), r"seed has shape \(0,\)"),
    "a float seed": (lambda s: s.__setitem__("seed", np.array([1.5])), "seed has dtype float64"),
    "a key missing": (lambda s: s.pop("rng"), r"lacks \['rng'\]"),
    "an unknown key": (lambda s: s.__setitem__("extra", np.zeros(1)), r"unknown key\(s\) \['extra'\]"),
    "a ragged array": (lambda s: s.__setitem__("rng", [[1], [1, 2]]), "rng is not an array"),
    "other rules": (lambda s: s["rules"].__setitem__(k.K_WIN_TRICKS, 9), "other rules, episode or max_hands"),
    "a rules string": (lambda s: s.__setitem__("rules", "standard"), "rules has dtype"),
    "done set mid-game": (lambda s: s["done"].__setitem__(1, True), r"done\[1\] is set"),
    "done not bool": (lambda s: s.__setitem__("done", np.full(SLOTS, 3)), "done holds values 3..3"),
    "finished winners": (_set(k.S_FIN_WINNERS, 9), r"S_FIN_WINNERS\] is 9; it must be 0\.\.7"),
    "finished length": (_set(k.S_FIN_LOG_LEN, -1), r"S_FIN_LOG_LEN\] is -1"),
}


@pytest.fixture(scope="module")
def played() -> tuple[VectorGame, dict]:
    g = _played()
    return g, g.get_state()


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_a_tampered_state_is_refused_by_name_and_nothing_changes(played, name: str) -> None:
    g, state = played
    tamper, match = TAMPERINGS[name]
    bad = _copy(state)
    tamper(bad)
    with pytest.raises(VectorStateError, match=match):
        g.set_state(bad)
    assert _same(g.get_state(), state)  # untouched


@pytest.mark.parametrize("seed", [2**64 + 9, 2**128 - 1, -9, -(2**100)])
def test_a_seed_beyond_one_word_is_saved_whole(seed: int) -> None:
    g = VectorGame(3, seed=seed, max_hands=2)
    g.reset()
    state = g.get_state()
    assert state["seed"].dtype == np.uint64 and state["seed"].shape == (3,)
    h = VectorGame(3, seed=0, max_hands=2)
    h.reset()
    h.set_state(_copy(state))
    assert h.seed == seed and _same(h.get_state(), state)
    h.reset(seed=seed)
    fresh = VectorGame(3, seed=seed, max_hands=2)
    fresh.reset()
    assert [h.record(i) for i in range(3)] == [fresh.record(i) for i in range(3)]


@pytest.mark.parametrize(
    "words, match",
    [
        ([1, 2], r"seed has shape \(2,\); it must be \(1,\) \(a seed 0\.\.2\*\*64-1\) or \(3,\)"),
        ([1, 2, 2], r"seed\[2\] is 2; it is 1 for a negative seed, 0 otherwise"),
        ([5, 0, 0], r"seed holds 5 in three words; a seed 0\.\.2\*\*64-1 is one word"),
        ([0, 0, 1], r"seed holds 0 in three words"),
    ],
)
def test_a_seed_that_get_state_never_writes_is_refused(played, words: list[int], match: str) -> None:
    g, state = played
    bad = _copy(state)
    bad["seed"] = np.array(words, dtype=np.uint64)
    with pytest.raises(VectorStateError, match=match) as caught:
        g.set_state(bad)
    assert "\n" not in str(caught.value)
    assert _same(g.get_state(), state)


def test_a_state_that_is_not_a_dict_is_refused(played) -> None:
    g, state = played
    with pytest.raises(VectorStateError, match="a dict of arrays"):
        g.set_state([1, 2])  # type: ignore[arg-type]
    assert isinstance(VectorStateError("x"), ValueError)


def test_the_ended_game_of_a_done_slot_is_checked_too() -> None:
    g = _ended()
    state = g.get_state()
    slot = int(np.flatnonzero(state["done"])[0])
    record = g.finished_record(slot)
    g.set_state(_copy(state))
    assert g.finished_record(slot) == record  # restored as it was
    replay(record)
    for column, value, match in (
        (k.S_FIN_HANDS, 7, "S_FIN_HANDS"),
        (k.S_FIN_TRUNCATED, 1 - state["st"][slot, k.S_FIN_TRUNCATED], "S_FIN_TRUNCATED"),
        (k.S_FIN_LOG_LEN, state["st"][slot, k.S_FIN_LOG_LEN] - 1, "not over"),
        (k.S_LOG_LEN, 3, "a new game has just begun"),
    ):
        bad = _copy(state)
        bad["st"][slot, column] = value
        with pytest.raises(VectorStateError, match=match):
            g.set_state(bad)
    bad = _copy(state)
    bad["rng_start"][slot, 1] ^= 1
    with pytest.raises(VectorStateError, match="the game that just ended"):
        g.set_state(bad)


def test_random_tampering_is_refused_or_gives_games_the_lockstep_check_accepts() -> None:
    """Property: a valid state with one entry changed at random is refused, or it is a state the batch could
    have reached (its games play on in lockstep with the reference and their records replay)."""
    base = _played(120, seed=4, slots=3)
    state = base.get_state()
    rng = np.random.default_rng(7)
    refused = accepted = 0
    for trial in range(120):
        bad = _copy(state)
        name = ["st", "cm", "rng", "rng_start", "log", "done"][trial % 6]
        a = bad[name]
        index = tuple(int(rng.integers(n)) for n in a.shape)
        if name == "log" and trial % 12 == 4:  # now and then beyond the games' logs: harmless
            index = (index[0], int(rng.integers(100, a.shape[1])))
        old = int(a[index])
        new = old ^ (1 << int(rng.integers(8))) if trial % 3 else int(rng.integers(-3, 60))
        a[index] = np.array(new).astype(a.dtype)
        g = VectorGame(3, seed=0, max_hands=2)
        g.reset()
        try:
            g.set_state(bad)
        except VectorStateError:
            refused += 1
            continue
        accepted += 1
        lockstep(num_games=4, vec=g, replay_every=1)
    assert refused > 50 and accepted > 5  # both kinds were tried


def test_tampered_states_never_crash_the_process() -> None:
    """The crash-prone tamperings, in a child process (a crash fails this test, not the run)."""
    code = textwrap.dedent(
        """
        import numpy as np
        from sm_env.compiled import kernels as k
        from sm_env.compiled.batch import VectorGame, VectorStateError
        g = VectorGame(4, seed=1, max_hands=2)
        g.reset()
        for _ in range(60):
            g.step(np.array([np.flatnonzero(row)[0] for row in g.legal_mask()]))
        state = g.get_state()
        rng = np.random.default_rng(0)
        tampered = []
        for value in (10**6, -5, 2**31 - 1):
            s = dict(state, st=state["st"].copy()); s["st"][0, k.S_LOG_LEN] = value; tampered.append(s)
        tampered.append(dict(state, log=state["log"][:, :1].copy()))
        tampered.append(dict(state, st=np.full(state["st"].shape, np.nan)))
        for _ in range(200):
            name = ("st", "cm", "log")[int(rng.integers(3))]
            s = dict(state, **{name: state[name].copy()})
            flat = s[name].reshape(-1)
            flat[rng.integers(flat.size, size=3)] = rng.integers(-(2**7), 2**7, size=3).astype(flat.dtype)
            tampered.append(s)
        kept = 0
        for s in tampered:
            try:
                g.set_state(s)
            except VectorStateError:
                continue
            kept += 1
            for _ in range(30):  # whatever was accepted plays on
                g.step(np.array([np.flatnonzero(row)[0] for row in g.legal_mask()]))
                g.observe(); g.full_state()
        print("survived", len(tampered), kept)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("survived 205")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"episode": "round"}, "episode must be 'game'"),
        ({"max_hands": 0}, "max_hands must be a whole number"),
        ({"max_hands": 2.5}, "max_hands must be a whole number"),
        ({"max_hands": 2**40}, "max_hands must be at most"),
        ({"parallel": "yes"}, "parallel must be True or False"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"rules": {"target_score": 2**40}}, f"target_score: {2**40}"),  # beyond the kernels' int32 scores
    ],
)
def test_bad_constructor_arguments_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        VectorGame(2, **kwargs)


def test_float_rows_seats_and_final_seats_are_refused_not_truncated(played) -> None:
    g, _ = played
    with pytest.raises(ValueError, match="rows must be whole numbers"):
        g.observe(rows=np.array([0.7, 1.2]))
    with pytest.raises(ValueError, match="seats must be whole numbers"):
        g.full_state(rows=[0, 1], seats=[0.5, 1.0])
    with pytest.raises(ValueError, match="rows must be whole numbers"):
        g.observe(rows=[True, False])
    with pytest.raises(ValueError, match="final_seats must be whole numbers"):
        g.step(np.zeros(SLOTS, dtype=np.int64), final_seats=np.zeros(SLOTS))
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="num_hands must be a whole number"):
            g.deals(0, bad)
    assert g.observe(rows=[]).shape == (0, g.observation_size)  # an empty list reads as floats: allowed
    assert np.array_equal(g.observe(rows=[1], seats=[2]), g.observe(rows=np.array([1]), seats=2))


@pytest.mark.parametrize(
    "rules, column, name",
    [
        ("calls", k.S_CALLS_LEFT + 1, r"S_CALLS_LEFT\+1"),
        ("calls", k.S_CALL, "S_CALL"),
        ("woburn-auction", k.S_AUC_HIGH, "S_AUC_HIGH"),
        ("woburn-auction", k.S_AUC_PASSED, "S_AUC_PASSED"),
        ("woburn-auction", k.S_PASSED_OUT, "S_PASSED_OUT"),
        ("four-5-3-2-2", k.S_SC + 3, r"S_SC\+3"),  # the fourth seat's columns
        ("four-6-3-2-1", k.S_TW + 3, r"S_TW\+3"),
    ],
)
def test_the_auction_calls_and_four_seat_columns_are_restored_and_checked(rules: str, column: int, name: str) -> None:
    g = VectorGame(SLOTS, rules=rules, seed=3, max_hands=20)
    g.reset()
    rng = np.random.default_rng(3)
    for _ in range(60):  # passes often: passed-out deals and auctions under way
        mask = g.legal_mask()
        actions = [
            58 if len(row) > 58 and row[58] and rng.random() < 0.6 else rng.choice(np.flatnonzero(row)) for row in mask
        ]
        g.step(np.array(actions))
    state = g.get_state()
    copy = VectorGame(SLOTS, rules=rules, seed=0, max_hands=20)
    copy.set_state(_copy(state))  # accepted as it is
    lockstep(num_games=SLOTS, vec=copy, replay_every=0, pass_rate=0.6)  # and plays on as the reference
    bad = _copy(state)
    bad["st"][1, column] += 1
    with pytest.raises(VectorStateError, match=rf"st\[1, {name}\] is"):
        g.set_state(bad)
    assert _same(g.get_state(), state)  # untouched


def _random_legal(games: VectorGame, rng: np.random.Generator) -> np.ndarray:
    masks = games.legal_mask()
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


@pytest.mark.parametrize("rules", ["standard", "four-5-3-2-2"])
def test_copied_slots_continue_as_their_originals(rules: str) -> None:
    """copy_slots: a copy plays on exactly as its original under the same actions (observations, masks, rewards,
    the next hand's deal from the copied random stream, records), into a batch of another size."""
    source = VectorGame(6, rules, seed=3, episode="game", max_hands=4)
    source.reset()
    rng = np.random.default_rng(0)
    for _ in range(70):
        source.step(_random_legal(source, rng))
    copies = VectorGame(9, rules, seed=99, episode="game", max_hands=4)
    copies.reset()
    source_rows, rows = np.array([4, 1, 1]), np.array([0, 7, 3])
    copies.copy_slots(source, source_rows, rows)
    assert copies.record(7) == source.record(1) and copies.record(0) == source.record(4)
    for _ in range(120):
        actions = _random_legal(source, rng)
        both = np.zeros(9, dtype=np.int64)
        both[rows] = actions[source_rows]
        active = np.zeros(9, dtype=np.bool_)
        active[rows] = True
        np.testing.assert_array_equal(copies.observe(rows=rows), source.observe(rows=source_rows))
        np.testing.assert_array_equal(copies.legal_mask()[rows], source.legal_mask()[source_rows])
        r_source, done_source = source.step(actions)
        r_copies, done_copies = copies.step(both, active=active)
        np.testing.assert_array_equal(r_copies[rows], r_source[source_rows])
        np.testing.assert_array_equal(done_copies[rows], done_source[source_rows])
    assert copies.record(3) == source.record(1)


def test_copy_slots_refuses_other_rules_and_bad_rows() -> None:
    source = VectorGame(4, "standard", seed=1, episode="game", max_hands=4)
    source.reset()
    other = VectorGame(4, "standard", seed=1, episode="hand")
    other.reset()
    with pytest.raises(ValueError, match="episode"):
        other.copy_slots(source, [0], [0])
    target = VectorGame(4, "standard", seed=2, episode="game", max_hands=4)
    target.reset()
    before = target.get_state()
    for source_rows, rows, match in [
        ([0, 1], [2, 2], "distinct"),
        ([0], [4], "slot indices 0-3"),
        ([5], [0], "source_rows must be slot indices"),
        ([0.0], [1], "whole numbers"),
        ([0, 1], [1], "one length"),
    ]:
        with pytest.raises(ValueError, match=match):
            target.copy_slots(source, source_rows, rows)
    after = target.get_state()
    assert all(np.array_equal(before[name], after[name]) for name in before)
    with pytest.raises(ValueError, match="must be a VectorGame"):
        target.copy_slots("games", [0], [0])
