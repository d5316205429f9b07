"""What every trainer's checkpoints share: one error type, one safe loader, and the formats in one place.

Three families of checkpoints: the project's own format (below), SB3's zip and RLlib's folder (each in its
library's format); and the project's format's predecessors, read as they were written.

Every checkpoint is written atomically (:mod:`sm_env.files.atomic`, or a temporary folder renamed), holds
tensors (on the CPU, whatever the run's ``train.device``: :mod:`training.common.device`) and plain values only,
and is read with ``torch.load(weights_only=True)`` through :func:`load_tensors`, which never unpickles code and
never relays torch's advice to load a file unsafely.
Anything unreadable, damaged or not fitting the run is a :class:`CheckpointError`: one line naming the
file and what is wrong (a trainer checks every field it restores: :func:`checked_array` for shapes, dtypes,
ranges and finite values, :func:`check_finite` for weights and optimiser states, :func:`check_counters`)
(a :class:`~training.common.yaml_config.ConfigError`, so the command lines print
it as ``... error: ...`` and exit with status 2).

One checkpoint format for the trainers the project owns (vector PPO, DMC, exploit, distill's fit, the belief
network's fit: :data:`TRAINERS`): a torch file ``{"format": "sergeant-major-checkpoint/1", "trainer": NAME,
...}`` written by :func:`save_checkpoint` and read by :func:`open_checkpoint` (which names the trainer a file
belongs to when it is another's), in the run folder's ``checkpoints/`` (:mod:`training.common.folders`; the
belief fit's beside its output). The fields after ``trainer`` are that trainer's state, each checked as it is
restored:

- ``vector-ppo`` (``checkpoints/latest.pt``, ``step_<N>.pt``; :mod:`training.vector.ppo`; ``exploit`` writes
  the same with an ``exploit`` entry: its target and curve): config, counters, network and optimiser state
  dicts, the engine's state, seat kinds, generator state, snapshots, metrics and evaluations;
- ``dmc`` (the same files; :mod:`training.vector.dmc`): config, counters, the Q-network's and Adam's state
  dicts, the engine's state, generator state, the open episodes' decisions, the replay, metrics and
  evaluations (the run's ``config.yaml`` has a ``dmc:`` section: how ``sergeant-major train --resume`` tells
  it from vector PPO);
- ``distill-fit`` (``checkpoints/fit_r<k>.pt``; :mod:`training.distill.fit`): the fit's ``stamp`` (settings,
  seed, decisions), epoch, history, network, optimiser and schedule state dicts, numpy and torch RNG states;
- ``belief-fit`` (``OUT.ckpt`` beside the belief file ``OUT``; :mod:`training.distill.belief`, ``sergeant-major
  distill belief``): the fit's settings, the chunks done, network, optimiser and schedule state dicts, the
  engine's games.

Files written before the one format (``sergeant-major-vector-ppo/1``, ``sergeant-major-vector-dmc/1``,
``sergeant-major-distill-fit/1`` or none) are read as they were written (:data:`OLD_FORMATS`).

Not checkpoints of this format, on purpose:

- the **policy file** (``final_policy.pt``, ``policies/*.pt``, ``agents/policies/*.pt``: what ``ppo:PATH``
  plays): ``{"format": "sergeant-major-policy/1", "observation_size", "action_count", "net_arch",
  "activation", ..., "state_dict"}``, the actor in SB3 key naming
  (:func:`agents.players.ppo_agent.export_policy`): what every trainer exports and every host plays;
- the library routes keep their library's format, so that the library reads them: the **SB3 trainer**
  (``checkpoints/latest.zip``, ``step_*.zip``; :mod:`training.sb3.checkpoint`), the zip ``MaskablePPO.save``
  writes plus ``sm_policy.json`` and ``sm_training_state.pt``; **RLlib** (``checkpoints/iter_NNNNNN/``;
  :mod:`training.rllib.trainer`), the folder RLlib's ``save_to_path`` writes plus ``sm_state.json`` and
  ``league.pt``.
"""

from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Callable
from typing import Any

from sm_env.files.atomic import atomic_path

from .device import on_cpu
from .yaml_config import ConfigError

CHECKPOINT_FORMAT = "sergeant-major-checkpoint/1"
TRAINERS = ("vector-ppo", "dmc", "distill-fit", "belief-fit")
"""The trainers whose states this format holds (the ``trainer`` field)."""
OLD_FORMATS = {
    "vector-ppo": "sergeant-major-vector-ppo/1",
    "dmc": "sergeant-major-vector-dmc/1",
    "distill-fit": "sergeant-major-distill-fit/1",
}
"""Each trainer's format before the one format; its files are read as written (no ``trainer`` field)."""


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


def save_checkpoint(path: str, trainer: str, state: dict[str, Any]) -> None:
    """``state`` (tensors and plain values) as a checkpoint of ``trainer`` at ``path``, atomically, every tensor
    on the CPU (a run on a GPU writes what any machine loads; a resume maps it to its own ``train.device``)."""
    import torch

    if trainer not in TRAINERS:
        raise ValueError(f"unknown trainer {trainer!r}; the format holds {', '.join(TRAINERS)}")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save({"format": CHECKPOINT_FORMAT, "trainer": trainer, **on_cpu(state)}, tmp)


def open_checkpoint(path: str, trainer: str, what: str = "the checkpoint") -> dict[str, Any]:
    """The state :func:`save_checkpoint` wrote for ``trainer`` at ``path`` (or a file of the trainer's
    :data:`OLD_FORMATS`); a :class:`CheckpointError` naming what the file is when it is not that."""
    state = load_tensors(path, path, what)
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: {what} is not a {CHECKPOINT_FORMAT} file")
    found = state.get("format")
    if found == CHECKPOINT_FORMAT:
        other = state.get("trainer")
        if other != trainer:
            raise CheckpointError(f"{path}: {what} is the {other!r} trainer's, not the {trainer!r} trainer's")
        return state
    if found == OLD_FORMATS.get(trainer) or (trainer == "distill-fit" and found is None and "stamp" in state):
        return state  # written before the one format
    named = next((name for name, old in OLD_FORMATS.items() if old == found), None)
    if named is not None:
        raise CheckpointError(f"{path}: {what} is the {named!r} trainer's, not the {trainer!r} trainer's")
    raise CheckpointError(f"{path}: {what} is not a {CHECKPOINT_FORMAT} file")


def write_checkpoint(run_dir: str, trainer: str, step: int, state: dict[str, Any], keep: int) -> str:
    """``state`` as ``checkpoints/step_<step>.pt`` and ``checkpoints/latest.pt`` of ``run_dir`` (atomic), keeping
    the ``keep`` newest numbered ones; returns the numbered file."""
    folder = os.path.join(run_dir, "checkpoints")
    numbered = os.path.join(folder, f"step_{step:010d}.pt")
    for path in (numbered, os.path.join(folder, "latest.pt")):
        save_checkpoint(path, trainer, state)
    kept = sorted(f for f in os.listdir(folder) if f.startswith("step_") and f.endswith(".pt"))
    for old in kept[: max(0, len(kept) - keep)]:
        os.remove(os.path.join(folder, old))
    return numbered


def read_checkpoint(path: str, trainer: str, restore: Callable[[str, dict[str, Any]], None]) -> None:
    """Read the checkpoint of ``trainer`` at ``path`` and hand it to ``restore(path, state)``; anything missing,
    damaged or tampered is one :class:`CheckpointError` line naming the file."""
    if not os.path.isfile(path):
        raise CheckpointError(f"cannot resume: {path} does not exist")
    state = open_checkpoint(path, trainer)
    try:
        restore(path, state)
    except CheckpointError:
        raise
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, RuntimeError) as err:  # damaged, tampered
        first = (str(err).strip().splitlines() or [""])[0]  # torch's load_state_dict errors run over lines
        raise damaged(path, f"{type(err).__name__}: {first}") from None


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


ENGINE_WORDS = ("cm", "rng", "rng_start", "seed")  # the engine's uint64 arrays (saved as int64 tensors)


def engine_state(games: Any) -> dict[str, Any]:
    """Every slot's game of ``games`` (a :class:`~sm_env.compiled.batch.VectorGame`) as tensors
    (``VectorGame.get_state``; uint64 arrays viewed as int64)."""
    import numpy as np
    import torch

    return {k: torch.from_numpy(v.view(np.int64) if v.dtype == np.uint64 else v) for k, v in games.get_state().items()}


def restore_engine(games: Any, saved: dict[str, Any]) -> None:
    """Put back what :func:`engine_state` saved (``VectorGame.set_state`` checks it whole)."""
    import numpy as np

    games.set_state({k: (v.numpy().view(np.uint64) if k in ENGINE_WORDS else v.numpy()) for k, v in saved.items()})
