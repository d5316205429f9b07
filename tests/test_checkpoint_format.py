"""training/common/checkpoint.py: the one checkpoint format of the trainers the project owns."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from training.common.checkpoint import (  # noqa: E402
    CHECKPOINT_FORMAT,
    CheckpointError,
    open_checkpoint,
    save_checkpoint,
    write_checkpoint,
)


def test_a_checkpoint_names_its_trainer_and_reads_back(tmp_path):
    path = str(tmp_path / "deep" / "c.pt")  # the folder is made
    save_checkpoint(path, "dmc", {"counters": {"global_step": 3}, "net": {"w": torch.ones(2)}})
    state = open_checkpoint(path, "dmc")
    assert (state["format"], state["trainer"], state["counters"]) == (CHECKPOINT_FORMAT, "dmc", {"global_step": 3})
    assert torch.equal(state["net"]["w"], torch.ones(2))
    with pytest.raises(CheckpointError, match=r"c.pt: the checkpoint is the 'dmc' trainer's, not the 'vector-ppo'"):
        open_checkpoint(path, "vector-ppo")
    with pytest.raises(ValueError, match="unknown trainer 'sb3'; the format holds vector-ppo, dmc, distill-fit"):
        save_checkpoint(path, "sb3", {})


@pytest.mark.parametrize(
    ("saved", "trainer"),
    [
        ({"format": "sergeant-major-vector-ppo/1", "net": {}}, "vector-ppo"),
        ({"format": "sergeant-major-vector-dmc/1", "net": {}}, "dmc"),
        ({"format": "sergeant-major-distill-fit/1", "stamp": {}}, "distill-fit"),
        ({"stamp": {}, "epoch": 1}, "distill-fit"),  # the fit's checkpoints before they named a format
    ],
)
def test_the_formats_before_the_one_format_are_read_as_written(tmp_path, saved, trainer):
    path = tmp_path / "old.pt"
    torch.save(saved, path)
    assert open_checkpoint(str(path), trainer) == saved


@pytest.mark.parametrize(
    ("saved", "words"),
    [
        ({"format": "sergeant-major-vector-dmc/1"}, "is the 'dmc' trainer's, not the 'vector-ppo' trainer's"),
        ({"format": "something/1"}, "is not a sergeant-major-checkpoint/1 file"),
        ({"stamp": {}}, "is not a sergeant-major-checkpoint/1 file"),  # no format: only the fit's old files
        ([1, 2], "is not a sergeant-major-checkpoint/1 file"),
    ],
)
def test_anything_else_is_refused_in_one_line(tmp_path, saved, words):
    path = tmp_path / "other.pt"
    torch.save(saved, path)
    with pytest.raises(CheckpointError, match=words) as err:
        open_checkpoint(str(path), "vector-ppo")
    assert "\n" not in str(err.value)


def test_numbered_checkpoints_are_kept_as_asked(tmp_path):
    for step in (10, 20, 30):
        write_checkpoint(str(tmp_path), "vector-ppo", step, {"counters": {"global_step": step}}, keep=2)
    folder = tmp_path / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["latest.pt", "step_0000000020.pt", "step_0000000030.pt"]
    assert open_checkpoint(str(folder / "latest.pt"), "vector-ppo")["counters"] == {"global_step": 30}
