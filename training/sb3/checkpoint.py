"""The checkpoint format: an SB3 zip with two entries of our own.

A checkpoint (``checkpoints/latest.zip``, ``checkpoints/step_*.zip``) is what
``MaskablePPO.save`` writes (``policy.pth``, ``policy.optimizer.pth``,
``data``, ...) plus:

- ``sm_policy.json``: plain JSON metadata of the policy (observation size,
  action count, ``net_arch``, activation, rules, timesteps), the entry that
  :mod:`agents.players.ppo_agent` reads;
- ``sm_training_state.pt``: the trainer's state, tensors and plain values
  only (``torch.load(weights_only=True)``): format, counters, the opponent
  pool's snapshots, the RNG states, the evaluation history and the config.

Files are written through :func:`sm_env.files.atomic.atomic_path`, so a run killed
at any moment leaves the previous checkpoint intact. Loading never unpickles
code, and a file that cannot be read, or does not fit the model of the
config, is a :class:`CheckpointError` in one line (every trainer's checkpoint
formats and what they share: :mod:`training.common.checkpoint`).
"""

from __future__ import annotations

import io
import os
import random
import warnings
import zipfile
from typing import Any

import numpy as np
import torch

from agents.players.ppo_agent import META_ENTRY, PolicyLoadError, check_weights_size, read_zip_meta
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import dump_json
from training.common.checkpoint import CheckpointError, check_format, load_tensors

STATE_ENTRY = "sm_training_state.pt"
STATE_FORMAT = "sergeant-major-training-state/1"
# key of the training state -> the type it must have
_STATE_KEYS: dict[str, type | tuple[type, ...]] = {
    "num_timesteps": int,
    "n_updates": int,
    "segment": int,
    "last": dict,
    "snapshots": list,
    "rng": dict,
}


def rng_states() -> dict[str, Any]:
    """The states of python ``random``, numpy's global RNG and torch, as tensors and plain values."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": (name, torch.from_numpy(np.asarray(keys, dtype=np.int64)), int(pos), int(has_gauss), float(cached)),
        "torch": torch.get_rng_state(),
    }


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore what :func:`rng_states` returned."""
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = states["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(states["torch"])


def write_model_zip(model: Any, path: str, meta: dict[str, Any], state: dict[str, Any] | None) -> None:
    """``model.save`` to a temporary file, add our entries, then rename it over ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_path(path) as tmp:
        model.save(tmp)
        with zipfile.ZipFile(tmp, "a") as archive:
            archive.writestr(META_ENTRY, dump_json(meta, f"{path}: {META_ENTRY}", indent=1))
            if state is not None:
                buffer = io.BytesIO()
                torch.save(state, buffer)
                archive.writestr(STATE_ENTRY, buffer.getvalue())


def read_training_state(path: str) -> dict[str, Any]:
    """The trainer's state from a checkpoint; a CheckpointError for anything unreadable or malformed."""
    try:
        with zipfile.ZipFile(path) as archive:
            raw = archive.read(STATE_ENTRY)
    except (OSError, KeyError, zipfile.BadZipFile, zipfile.LargeZipFile) as err:
        raise CheckpointError(f"{path}: not a training checkpoint ({err})") from None
    state = check_format(load_tensors(io.BytesIO(raw), path, STATE_ENTRY), path, STATE_FORMAT, STATE_ENTRY)
    for key, kind in _STATE_KEYS.items():
        if not isinstance(state.get(key), kind):
            raise CheckpointError(f"{path}: {STATE_ENTRY} has no valid {key!r}; the checkpoint is damaged")
    return state


def read_policy_meta(path: str) -> dict[str, Any]:
    """The ``sm_policy.json`` entry of a checkpoint ({} if it has none), read within bounds."""
    try:
        with zipfile.ZipFile(path) as archive:
            return read_zip_meta(archive, path)
    except PolicyLoadError as err:
        raise CheckpointError(str(err)) from None
    except (OSError, EOFError, zipfile.BadZipFile) as err:
        raise CheckpointError(f"{path}: {META_ENTRY} cannot be read ({err})") from None


def load_weights(model: Any, path: str, net_arch: list[int], activation: str) -> None:
    """Load the weights and optimizer state of a checkpoint into ``model`` (built from the config).

    The network of the checkpoint must be the config's (``ppo.net_arch``,
    ``ppo.activation``); otherwise, or for an unreadable file, a
    CheckpointError says so in one line.
    """
    meta = read_policy_meta(path)
    for key, wanted in (("net_arch", list(net_arch)), ("activation", activation)):
        if key in meta and meta[key] != wanted:
            raise CheckpointError(
                f"{path}: the checkpoint's network has {key} {meta[key]!r} but the config says ppo.{key} "
                f"{wanted!r}; resume with the config the run was trained with"
            )
    try:
        with zipfile.ZipFile(path) as archive:
            for entry in {"policy.pth", "policy.optimizer.pth"} & set(archive.namelist()):
                check_weights_size(archive, meta, path, entry)
    except PolicyLoadError as err:
        raise CheckpointError(f"{err}; the checkpoint is damaged") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.set_parameters(path, exact_match=True, device=model.device)  # weights + optimizer, weights_only
    except (RuntimeError, ValueError, KeyError) as err:
        if "size mismatch" in str(err) or "Missing key" in str(err) or "Unexpected key" in str(err):
            raise CheckpointError(
                f"{path}: the checkpoint's weights do not fit the network of the config (ppo.net_arch "
                f"{list(net_arch)}); resume with the config the run was trained with"
            ) from None
        raise CheckpointError(f"{path}: the checkpoint's weights cannot be read; the file is damaged") from None
    except Exception:  # noqa: BLE001 - e.g. an UnpicklingError whose message advises unsafe loading
        raise CheckpointError(f"{path}: the checkpoint's weights cannot be read; the file is damaged") from None
