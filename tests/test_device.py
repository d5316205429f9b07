"""The learners' device (training/common/device.py): the one parser and its one-line errors, the configs of every
torch trainer that take it (``sergeant-major config``), runs on ``cpu`` equal to the default run, checkpoints of
CPU tensors, and, where CUDA is, tiny runs on it (skipped elsewhere, with the reason)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")

from helpers import TINY_DMC, TINY_PPO  # noqa: E402

from sm_cli.cli import main as sergeant_major  # noqa: E402
from training.common import device  # noqa: E402
from training.common.checkpoint import open_checkpoint  # noqa: E402
from training.common.device import module_device, on_cpu, resolve_device  # noqa: E402
from training.common.errors import ConfigError  # noqa: E402
from training.vector.config import load_dmc_config, load_selfplay_config  # noqa: E402
from training.vector.dmc import DMC  # noqa: E402
from training.vector.ppo import VectorPPO  # noqa: E402

CUDA = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device here: the runs on cuda are checked where there is one"
)
DMC_TINY = [*TINY_DMC, "train.total_timesteps=640"]  # updates from the fifth rollout (a first hand: 53 steps)
PPO_TINY = [
    *TINY_PPO,
    "ppo.critic=full",
    "opponents.mix={self: 1, random: 1, snapshots: 1}",  # frozen copies act too
    "opponents.snapshot_every=100",
    "train.total_timesteps=600",
]
RUNS = {  # the batched trainers: config loader, trainer, settings, its network
    "dmc": (load_dmc_config, DMC, DMC_TINY, lambda run: run.q),
    "vector": (load_selfplay_config, VectorPPO, PPO_TINY, lambda run: run.net),
}


@pytest.fixture
def no_cuda(monkeypatch):
    """A machine without CUDA or MPS, whatever this one has."""
    monkeypatch.setattr(device, "_cuda_count", lambda: 0)
    monkeypatch.setattr(device, "_mps", lambda: False)


@pytest.fixture
def two_gpus(monkeypatch):
    """A machine with two CUDA devices and MPS (only the parser is asked: nothing runs there)."""
    monkeypatch.setattr(device, "_cuda_count", lambda: 2)
    monkeypatch.setattr(device, "_mps", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)


def _tensors(value):
    """Every tensor in a loaded checkpoint (mappings, lists and tuples at any depth)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def _sb3_config(**train):
    """A tiny SB3 run (with a short warm start: its tensors go to the device too)."""
    from training.sb3.config import config_from_dict

    return config_from_dict(
        {
            "opponents": {"mix": {"random": 1.0}},
            "pretrain": {"teacher": "heuristic", "decisions": 256, "epochs": 1, "batch_size": 64},
            "ppo": {"n_steps": 64, "batch_size": 64, "net_arch": [16]},
            "train": {"total_timesteps": 128, "n_envs": 2, "segment_steps": 128, "progress_bar": False, **train},
            "eval": {"final_deals": 0, "opponents": ["random"]},
        }
    )


def _saved_devices(source) -> set[str]:
    """The devices of the tensors of a torch file as written (loaded without map_location)."""
    return {t.device.type for t in _tensors(torch.load(source, weights_only=True))}


# ---------------------------------------------------------------------------- the parser


@pytest.mark.parametrize("text", ["auto", "cpu"])
def test_auto_and_cpu_are_the_cpu_on_a_machine_without_cuda(no_cuda, text):
    assert resolve_device(text) == torch.device("cpu")


def test_every_value_on_a_machine_with_two_gpus_and_mps(two_gpus):
    wanted = {"auto": "cuda:0", "cpu": "cpu", "cuda": "cuda:0", "cuda:0": "cuda:0", "cuda:1": "cuda:1", "mps": "mps"}
    assert {text: str(resolve_device(text)) for text in wanted} == wanted
    assert device.available_devices() == ["cpu", "cuda:0", "cuda:1", "mps"]
    with pytest.raises(ConfigError) as info:
        resolve_device("cuda:2", "fit.device")
    assert str(info.value) == (
        "fit.device: this machine has no CUDA device 2 (it has: auto, cpu, cuda:0, cuda:1, mps), got 'cuda:2'"
    )


@pytest.mark.parametrize(
    "text", ["gpu", "CUDA", "Cpu", "cuda:", "cuda:-1", "cuda:01", "cuda:1.0", "cuda:0:1", "cuda:1000", " cpu", ""]
)
def test_a_text_that_is_no_device_is_one_line_naming_the_choices(text):
    with pytest.raises(ConfigError) as info:
        resolve_device(text)
    choices = "auto, cpu, cuda, cuda:N, mps (N: a CUDA device number, 0 the first)"
    assert str(info.value) == f"train.device: must be one of {choices}, got {text!r}"


@pytest.mark.parametrize("text", ["cuda", "cuda:0", "cuda:3", "mps"])
def test_a_device_the_machine_lacks_is_one_line_naming_what_it_has(no_cuda, text):
    kind = "MPS" if text == "mps" else "CUDA"
    with pytest.raises(ConfigError) as info:
        resolve_device(text)
    assert str(info.value) == f"train.device: this machine has no {kind} device (it has: auto, cpu), got {text!r}"
    with pytest.raises(ConfigError) as info:  # the config says so when it is read, blaming the override
        load_dmc_config(None, [f"train.device={text}"])
    message = str(info.value)
    assert message.startswith(f"--set train.device={text}: train.device: this machine has no {kind} device")
    assert "\n" not in message


def test_on_cpu_returns_what_holds_only_cpu_tensors_as_it_is():
    """A CPU run's checkpoint is the object it was (the same bytes as before the setting)."""
    state = torch.nn.Linear(3, 2).state_dict()
    nested = {"net": state, "history": [{"loss": 1.0}], "pair": (torch.zeros(2), 3), "name": "x"}
    assert on_cpu(state) is state and on_cpu(nested) is nested


# ---------------------------------------------------------------------------- the configs

KEYS = {
    "sb3": "train.device",
    "vector": "train.device",
    "dmc": "train.device",
    "exploit": "train.device",
    "rllib": "train.device",
    "distill": "fit.device",
    "playouts": "device",
}
"""Every torch trainer's config kind and its device key."""


@pytest.mark.parametrize("kind", KEYS)
def test_sergeant_major_config_lists_accepts_and_prints_the_device(kind, tmp_path, capsys):
    key = KEYS[kind]
    assert sergeant_major(["config", "--kind", kind]) == 0
    assert f"\n{key} = 'auto'  auto (CUDA where present, else the CPU), cpu" in capsys.readouterr().out
    path = tmp_path / "c.yaml"
    path.write_text(f"kind: {kind}\n" + ("target: {agent: random}\n" if kind == "exploit" else ""))
    for value in ("auto", "cpu"):
        assert sergeant_major(["config", str(path), f"{key}={value}"]) == 0
        node = yaml.safe_load(capsys.readouterr().out)
        for part in key.split("."):
            node = node[part]
        assert node == value
    assert sergeant_major(["config", str(path), f"{key}=gpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{key}: must be one of auto, cpu, cuda, cuda:N, mps" in err, err


# ---------------------------------------------------------------------------- runs on the CPU


@pytest.mark.parametrize("kind", RUNS)
def test_a_tiny_run_on_cpu_equals_the_default_run_and_saves_cpu_tensors(kind, tmp_path, no_cuda):
    load, trainer, tiny, network = RUNS[kind]
    runs = {}
    for name, extra in (("default", []), ("cpu", ["train.device=cpu"])):
        run = trainer(load(None, [*tiny, *extra]), str(tmp_path / name), quiet=True)
        run.train()
        assert run.device == torch.device("cpu") and run.facts()["device"] == "cpu"
        runs[name] = run
    a, b = (network(runs[name]).state_dict() for name in ("default", "cpu"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    losses = [[row.get("loss", row.get("policy_loss")) for row in runs[name].history] for name in runs]
    np.testing.assert_array_equal(*losses)  # NaN (no update yet) equal to NaN
    assert runs["cpu"].updates > 0
    for name in runs:
        assert _saved_devices(str(tmp_path / name / "checkpoints" / "latest.pt")) == {"cpu"}


def test_a_fit_goes_on_from_its_checkpoint_whatever_its_device_setting(tmp_path, no_cuda):
    """``fit.device`` is not part of what a fit is: a checkpoint made with one setting resumes with another."""
    from training.distill import data as distill_data
    from training.distill import fit as distill

    folder = str(tmp_path / "data")
    distill_data.generate(folder, 2, distill_data.DataSettings(seed=3, samples=2, chunk_hands=1), log=lambda *_: None)
    data = distill_data.load(folder)
    checkpoint, lines = str(tmp_path / "fit.pt"), []
    settings = {"net_arch": (16,), "epochs": 2, "batch_size": 64}
    first, _ = distill.fit(data, data, distill.FitSettings(**settings, device="cpu"), 0, lines.append, checkpoint)
    assert _saved_devices(checkpoint) == {"cpu"}
    again, _ = distill.fit(data, data, distill.FitSettings(**settings), 0, lines.append, checkpoint)  # auto
    assert "resuming the fit after epoch 2" in " ".join(lines) and module_device(again).type == "cpu"
    a, b = first.state_dict(), again.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_sb3_model_is_on_train_device_and_its_checkpoint_holds_cpu_tensors(tmp_path, no_cuda):
    pytest.importorskip("sb3_contrib")
    from training.sb3.trainer import train

    trainer = train(_sb3_config(device="cpu"), str(tmp_path), quiet=True)
    trainer.close()
    assert trainer.model.device == torch.device("cpu")
    with zipfile.ZipFile(tmp_path / "checkpoints" / "latest.zip") as archive:
        for entry in ("policy.pth", "policy.optimizer.pth", "sm_training_state.pt"):
            assert _saved_devices(io.BytesIO(archive.read(entry))) == {"cpu"}, entry


def test_the_rllib_learner_gets_one_gpu_for_cuda_and_none_otherwise(two_gpus):
    pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install -e '.[rllib]')")
    from training.rllib.config import load_rllib_config
    from training.rllib.trainer import build_algo_config

    for text, gpus, index in (("cpu", 0, 0), ("auto", 1, 0), ("cuda", 1, 0), ("cuda:1", 1, 1)):
        algo = build_algo_config(load_rllib_config(None, [f"train.device={text}"]))
        assert (algo.num_gpus_per_learner, algo.local_gpu_idx) == (gpus, index), text
    with pytest.raises(ConfigError) as info:
        load_rllib_config(None, ["train.device=mps"])
    assert str(info.value).endswith("train.device: RLlib's learner runs on CUDA or the CPU: auto, cpu, cuda or cuda:N")


@pytest.mark.parametrize("step", ["fit", "merge", "distil", "belief"])
def test_the_improve_steps_refuse_a_device_in_one_line(step, tmp_path, capsys, no_cuda):
    from training.distill.cli import main as improve

    for value, words in (("gpu", "must be one of auto, cpu, cuda, cuda:N, mps"), ("cuda", "has no CUDA device")):
        args = {"fit": ["--data", "x.npz"], "merge": ["--data", "x.npz", "--teacher", "q.pt"]}.get(step, [])
        args += ["--teacher", "t.pt", "--init", "i.pt"] if step == "distil" else []
        assert improve([step, *args, "--out", str(tmp_path / "o.pt"), "--device", value], "sergeant-major improve") == 2
        err = capsys.readouterr().err
        assert err.startswith(f"sergeant-major improve {step}: error: --device: ") and words in err, err
        assert err.count("\n") == 1


# ---------------------------------------------------------------------------- runs on CUDA


@CUDA
@pytest.mark.parametrize("kind", RUNS)
def test_a_tiny_run_on_cuda_updates_there_saves_cpu_tensors_and_resumes_on_either(kind, tmp_path):
    load, trainer, tiny, network = RUNS[kind]
    run = trainer(load(None, [*tiny, "train.device=cuda"]), str(tmp_path), quiet=True)
    run.train()
    assert module_device(network(run)).type == "cuda" and run.updates > 0
    latest = str(tmp_path / "checkpoints" / "latest.pt")
    assert _saved_devices(latest) == {"cpu"}
    saved = open_checkpoint(latest, "dmc" if kind == "dmc" else "vector-ppo")["net"]
    longer = [*tiny, "train.total_timesteps=1280"]
    for setting, wanted in (("train.device=cuda", "cuda"), ("train.device=cpu", "cpu")):
        again = trainer(load(None, [*longer, setting]), str(tmp_path), resume=True, quiet=True)
        weights = network(again).state_dict()
        assert module_device(network(again)).type == wanted
        assert all(torch.equal(weights[k].cpu(), saved[k]) for k in saved)
    again.train()  # the last one: on the CPU, from a run made on CUDA
    assert module_device(network(again)).type == "cpu"
    assert again.global_step >= 1280 and _saved_devices(latest) == {"cpu"}


@CUDA
def test_a_tiny_sb3_run_on_cuda_saves_cpu_tensors_and_resumes_on_the_cpu(tmp_path):
    pytest.importorskip("sb3_contrib")
    from training.sb3.trainer import train

    trainer = train(_sb3_config(device="cuda"), str(tmp_path), quiet=True)
    trainer.close()
    assert trainer.model.device.type == "cuda"
    with zipfile.ZipFile(tmp_path / "checkpoints" / "latest.zip") as archive:
        for entry in ("policy.pth", "policy.optimizer.pth", "sm_training_state.pt"):
            assert _saved_devices(io.BytesIO(archive.read(entry))) == {"cpu"}, entry
    resumed = train(_sb3_config(total_timesteps=256, device="cpu"), str(tmp_path), resume=True, quiet=True)
    resumed.close()
    assert resumed.model.device == torch.device("cpu") and resumed.model.num_timesteps == 256
