"""The labellers of training/distill are unchanged: a few hands labelled with fixed seeds give, array for array, the
labels stored in ``tests/data/label_fixtures.npz`` (made by the code before the search and play-out pipelines
became one package): pimc with heuristic rollouts (three and four players), pimc with policy rollouts searching
every decision, and the real-deal play-outs of the shipped policy (stored in the play-out files' old format, compared
after conversion into the label-shard format all labels share now, and read back by the fit's reader unchanged)."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("torch")

from sm_env.core.game import DISCARD, EXCHANGE, PLAY, TRUMP  # noqa: E402
from training.distill.config_playouts import STANDARD  # noqa: E402
from training.distill.data import DataSettings, label_shard, write_labels  # noqa: E402
from training.distill.data_playouts import load_rows, playout_shard  # noqa: E402
from training.distill.label_playouts import label_arrays  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "label_fixtures.npz")
SEARCHES = {
    "search_heuristic": DataSettings(seed=11, samples=2, chunk_hands=1, exchange_start=1.0),
    "search_four": DataSettings(seed=14, samples=2, chunk_hands=1, exchange_start=0.0, rules="four-5-3-2-2"),
    "search_policy": DataSettings(
        seed=12, samples=2, chunk_hands=1, exchange_start=1.0, rollout="policy", search_decisions="all"
    ),
}


def _stored(prefix: str) -> dict[str, np.ndarray]:
    with np.load(FIXTURES) as stored:
        return {key.removeprefix(f"{prefix}_"): stored[key] for key in stored.files if key.startswith(f"{prefix}_")}


def _same(made: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert sorted(made) == sorted(want)
    for key, value in want.items():
        assert made[key].dtype == value.dtype, key
        np.testing.assert_array_equal(made[key], value, err_msg=key)


@pytest.mark.parametrize("name", list(SEARCHES))
def test_the_search_labels_are_the_stored_ones(name: str) -> None:
    """Shard 0 of each search setting, labelled again, is the stored shard, entry for entry."""
    made, _ = label_shard(SEARCHES[name], 0)
    _same(made, _stored(name))


def test_the_playout_labels_are_the_stored_ones(tmp_path) -> None:
    """Four hands of the shipped policy, every legal move of every decision played out, are the stored file
    converted into a label shard; written and read back, its rows are the stored file's, dtype for dtype."""
    made, _ = label_arrays("trained", 13, 4, (EXCHANGE, TRUMP, DISCARD, PLAY), "standard")
    stored = _stored("playouts")
    _same(made, playout_shard(stored, STANDARD))
    path = str(tmp_path / "1.npz")
    write_labels(path, made)
    rows, _, _, rules = load_rows([path])
    del stored["rules"]
    _same(rows, stored)
    assert rules == STANDARD
