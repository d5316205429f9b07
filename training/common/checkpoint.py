"""What every trainer's checkpoints share: one error type, one safe loader, and the formats in one place.

Every checkpoint is written atomically (:mod:`sm_env.files.atomic`, or a temporary folder renamed), holds
tensors and plain values only, and is read with ``torch.load(weights_only=True)`` through
:func:`load_tensors`, which never unpickles code and never relays torch's advice to load a file unsafely.
Anything unreadable, damaged or not fitting the run is a :class:`CheckpointError`: one line naming the
file and what is wrong (a trainer checks every field it restores: :func:`checked_array` for shapes, dtypes,
ranges and finite values, :func:`check_finite` for weights and optimiser states, :func:`check_counters`)
(a :class:`~training.common.yaml_config.ConfigError`, so the command lines print
it as ``... error: ...`` and exit with status 2).

The formats (each trainer's own state, so they stay separate; every one is still read as written):

- **policy file** (``final_policy.pt``, ``policy_r<k>.pt``, ``agents/policies/*.pt``; not a checkpoint:
  what ``ppo:PATH`` plays): ``{"format": "sergeant-major-policy/1", "observation_size", "action_count",
  "net_arch", "activation", ..., "state_dict"}``, the actor in SB3 key naming
  (:func:`agents.players.ppo_agent.export_policy`);
- **SB3 trainer** (``checkpoints/latest.zip``, ``step_*.zip``; :mod:`training.sb3.checkpoint`): the zip
  that ``MaskablePPO.save`` writes (so that SB3 and ``ppo:PATH`` read it too) plus ``sm_policy.json`` (the
  policy's metadata) and ``sm_training_state.pt`` (``"format": "sergeant-major-training-state/1"``,
  counters, opponent snapshots, RNG states, evaluation history, config);
  ``final_model.zip`` is the same zip without the training state;
- **vector PPO** (``checkpoints/latest.pt``, ``step_*.pt``; :mod:`training.vector.ppo`): one torch file,
  ``"format": "sergeant-major-vector-ppo/1"``, config, counters, network and optimiser state dicts, the
  engine's state, seat kinds, generator state, snapshots, metrics and evaluations;
- **vector DMC** (``checkpoints/latest.pt``, ``step_*.pt``; :mod:`training.vector.dmc`): one torch file,
  ``"format": "sergeant-major-vector-dmc/1"``, config, counters, the Q-network's and Adam's state dicts, the
  engine's state, generator state, the open episodes' decisions, the replay, metrics and evaluations (the run's
  ``config.yaml`` has a ``dmc:`` section: how ``sergeant-major train --resume`` tells it from vector PPO);
- **distillation fit** (``fit_r<k>.ckpt``; :mod:`training.distill.fit`): one torch file,
  ``"format": "sergeant-major-distill-fit/1"`` (files written before the key existed have none), the
  fit's ``stamp`` (settings, seed, decisions), epoch, history, network, optimiser and schedule state
  dicts, numpy and torch RNG states;
- **RLlib** (``checkpoints/iter_NNNNNN/``; :mod:`training.rllib.trainer`): the folder RLlib's
  ``save_to_path`` writes, plus ``sm_state.json`` (counters, evaluations) and ``league.pt`` (the frozen
  opponents' weights by snapshot, module and key).
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

from .yaml_config import ConfigError


class CheckpointError(ConfigError):
    """A checkpoint that cannot be read or does not fit the run's config (one line, no traceback)."""


def load_tensors(source: Any, path: str, what: str = "the checkpoint") -> Any:
    """``torch.load(source, weights_only=True)`` on the CPU (``source``: the file ``path``, or a buffer
    holding one of its entries, named by ``what``); a :class:`CheckpointError` for anything it refuses."""
    import torch

    try:
        with warnings.catch_warnings():  # torch warns about odd pickles: the error below says it all
            warnings.simplefilter("ignore")
            return torch.load(source, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such checkpoint") from None
    except Exception as err:  # noqa: BLE001 - torch's own message advises unsafe loading: never relay it
        if isinstance(err, pickle.UnpicklingError):
            problem = "is corrupt or holds more than tensors and plain values"
        else:
            problem = f"cannot be read ({type(err).__name__})"
        raise CheckpointError(
            f"{path}: {what} {problem}; it was not written by this trainer, or it is damaged"
        ) from None


def check_format(state: Any, path: str, fmt: str, what: str = "the checkpoint") -> dict[str, Any]:
    """``state`` if it is a mapping whose ``"format"`` is ``fmt``, else a :class:`CheckpointError`."""
    if not isinstance(state, dict) or state.get("format") != fmt:
        raise CheckpointError(f"{path}: {what} is not a {fmt} file")
    return state


def damaged(path: str, problem: str) -> CheckpointError:
    """The one line of a checkpoint whose content is damaged or tampered: ``problem`` says which field."""
    return CheckpointError(f"{path}: the checkpoint is damaged ({problem})")


def checked_array(
    path: str,
    value: Any,
    key: str,
    shape: tuple[int, ...],
    kinds: str,
    low: float | None = None,
    high: float | None = None,
) -> Any:
    """``value`` (a saved tensor) as a numpy copy; a :func:`damaged` error unless it is a tensor of ``shape``
    whose dtype is of the numpy ``kinds`` (``"i"`` whole, ``"f"`` float, ...), every value finite and in
    ``[low, high)``."""
    import numpy as np
    import torch

    if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
        raise damaged(path, f"{key} is {type(value).__name__}, not a tensor")
    array = value.numpy().copy()
    if tuple(array.shape) != tuple(shape) or array.dtype.kind not in kinds:
        raise damaged(path, f"{key} is {array.dtype} {list(array.shape)}; the run has {list(shape)}")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise damaged(path, f"{key} holds NaN or infinite values")
    below = low is not None and bool((array < low).any())
    if below or (high is not None and bool((array >= high).any())):
        raise damaged(path, f"{key} holds values outside [{low}, {high})")
    return array


def check_finite(path: str, value: Any, key: str) -> None:
    """A :func:`damaged` error naming the entry if a floating tensor anywhere in ``value`` (tensors, and
    mappings and lists of them: a state dict, an optimiser's state) holds NaN or an infinite value."""
    import torch

    stack = [(key, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, torch.Tensor):
            if item.is_floating_point() and not bool(torch.isfinite(item).all()):
                raise damaged(path, f"{where} holds NaN or infinite values")
        elif isinstance(item, dict):
            stack.extend((f"{where}.{k}", v) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))


def check_counters(
    path: str, counters: Any, whole: tuple[str, ...], seconds: tuple[str, ...] = ("wall",), what: str = "counters"
) -> None:
    """A :func:`damaged` error unless ``counters`` (the entry ``what``) maps each of ``whole`` to a whole number
    >= 0 and each of ``seconds`` to a finite number >= 0."""
    import math

    if not isinstance(counters, dict):
        raise damaged(path, f"{what} is not a mapping")
    for name in whole:
        if type(counters.get(name)) is not int or counters[name] < 0:
            raise damaged(path, f"{what}.{name} is {counters.get(name)!r}, not a whole number >= 0")
    for name in seconds:
        value = counters.get(name)
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise damaged(path, f"{what}.{name} is {value!r}, not a number of seconds >= 0")
