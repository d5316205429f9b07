"""training.sb3.checkpoint: a damaged, hostile or mismatched checkpoint fails in one clear line."""

from __future__ import annotations

import io
import pickle
import re
import zipfile

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from training.cli import main  # noqa: E402
from training.sb3.checkpoint import STATE_ENTRY, CheckpointError, read_training_state  # noqa: E402

CONFIG = (
    "opponents: {mix: {random: 1}}\n"
    "ppo: {n_steps: 64, batch_size: 64, net_arch: [16]}\n"
    "train: {total_timesteps: 128, n_envs: 2, segment_steps: 128, checkpoint_every: 128, progress_bar: false}\n"
    "eval: {final_deals: 0, opponents: [random]}\n"
)


class Hostile:
    """Unpickling this would run code: weights_only loading refuses it."""

    def __reduce__(self):
        return (print, ("pwned",))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    config = root / "c.yaml"
    config.write_text(CONFIG)
    assert main(["--config", str(config), "--run-dir", str(root / "run"), "--quiet"]) == 0
    return root / "run"


def _rewrite(src, dst, entry: str, data: bytes | None) -> None:
    """Copy a zip, replacing (or, with None, dropping) one entry."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename == entry:
                if data is not None:
                    zout.writestr(entry, data)
            else:
                zout.writestr(item, zin.read(item.filename))


def _damaged_run(run, tmp_path, entry: str, data: bytes | None):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (copy / "summary.json").unlink()  # not complete (stopped before its end): --resume loads the checkpoint
    latest = copy / "checkpoints" / "latest.zip"
    _rewrite(run / "checkpoints" / "latest.zip", latest, entry, data)
    return copy


@pytest.mark.parametrize(
    "entry, data",
    [
        (STATE_ENTRY, pickle.dumps(Hostile())),
        (STATE_ENTRY, b"\x80\x04 not a pickle at all"),
        (STATE_ENTRY, None),
        ("policy.pth", pickle.dumps(Hostile())),
        ("policy.pth", b"garbage"),
    ],
    ids=["hostile-state", "corrupt-state", "no-state", "hostile-weights", "corrupt-weights"],
)
def test_a_damaged_or_hostile_checkpoint_fails_in_one_line(run, tmp_path, capsys, recwarn, entry, data):
    damaged = _damaged_run(run, tmp_path, entry, data)
    assert main(["--resume", str(damaged), "--quiet"]) == 2
    assert not recwarn.list  # no warning either: one line is all the user sees
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("sergeant-major train: error: ") and err.count("\n") == 1, err
    assert "weights_only" not in err and "Traceback" not in err and "pwned" not in captured.out + err


@pytest.mark.parametrize(
    "entry, data, words",
    [
        ("sm_policy.json", b"[" * 50_000 + b"]" * 50_000, "sm_policy.json: lists and objects nested more than 32"),
        ("sm_policy.json", b'{"net_arch": [16], "x": NaN}', "sm_policy.json: NaN is not a JSON value"),
        ("policy.pth", bytes(2 << 20), "policy.pth entry declares 2097152 bytes; the network of sm_policy.json"),
        ("policy.optimizer.pth", bytes(5 << 20), "policy.optimizer.pth entry declares 5242880 bytes"),
    ],
    ids=["deep-meta", "nan-meta", "weights-past-the-network", "optimizer-past-the-network"],
)
def test_metadata_and_weights_are_read_within_bounds(run, tmp_path, capsys, entry, data, words):
    damaged = _damaged_run(run, tmp_path, entry, data)
    assert main(["--resume", str(damaged), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sergeant-major train: error: ") and err.count("\n") == 1 and words in err, err


def test_a_state_of_the_wrong_shape_is_refused(run, tmp_path):
    import torch

    buffer = io.BytesIO()
    torch.save({"format": "sergeant-major-training-state/1", "num_timesteps": "many"}, buffer)
    damaged = _damaged_run(run, tmp_path, STATE_ENTRY, buffer.getvalue())
    with pytest.raises(CheckpointError, match="no valid 'num_timesteps'"):
        read_training_state(str(damaged / "checkpoints" / "latest.zip"))


def test_weights_that_do_not_fit_the_config_fail_in_one_line(run, tmp_path, capsys):
    damaged = _damaged_run(run, tmp_path, "sm_policy.json", None)  # no metadata: torch sees the mismatch
    assert main(["--resume", str(damaged), "--quiet", "--set", "ppo.net_arch=[8]"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "do not fit the network of the config" in err and "[8]" in err, err


def test_an_rllib_state_file_is_read_within_bounds(tmp_path):
    from types import SimpleNamespace

    from training.rllib.trainer import STATE_FILE, RLlibTrainer

    trainer = SimpleNamespace(algo=SimpleNamespace(restore_from_path=lambda path: None))
    state = tmp_path / STATE_FILE
    for text, words in [
        ("[" * 50_000 + "]" * 50_000, "sm_state.json: lists and objects nested more than 32 levels deep"),
        ('{"iteration": 1, "env_steps": 2, "wall": NaN}', "NaN is not a JSON value"),
        ('{"iteration": -1, "env_steps": 2, "wall": 0}', r"damaged \(sm_state.json.iteration is -1"),
        ('{"iteration": 1, "wall": 0}', r"damaged \(sm_state.json.env_steps is None"),
        ('{"iteration": 1, "env_steps": 2, "wall": 0, "evals": 3}', r"damaged \(evals is not a list\)"),
    ]:
        state.write_text(text)
        with pytest.raises(CheckpointError, match=words) as err:
            RLlibTrainer._restore(trainer, str(tmp_path))
        assert str(err.value).startswith(str(state)) and "\n" not in str(err.value)
    state.unlink()
    state.symlink_to("/dev/zero")
    with pytest.raises(CheckpointError, match="sm_state.json: larger than 1048576 bytes"):
        RLlibTrainer._restore(trainer, str(tmp_path))


def _state_with(run, change) -> bytes:
    import torch

    state = read_training_state(str(run / "checkpoints" / "latest.zip"))
    change(state)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda s: s.update(eval_history="[" * 50_000 + "]" * 50_000), "eval_history: lists and objects nested more"),
        (lambda s: s.update(eval_history='{"a": 1}'), "eval_history is not a list"),
        (lambda s: s.update(num_timesteps=-4), r"damaged \(sm_training_state.pt.num_timesteps is -4"),
        (lambda s: s.update(wall=float("nan")), r"sm_training_state.pt.wall is nan, not a number of seconds"),
    ],
)
def test_every_field_of_the_training_state_is_checked(run, tmp_path, capsys, change, words):
    damaged = _damaged_run(run, tmp_path, STATE_ENTRY, _state_with(run, change))
    assert main(["--resume", str(damaged), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(words, err), err
