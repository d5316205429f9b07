"""The device a learner trains on: one setting, one parser, for every torch trainer.

The setting is ``train.device`` (vector PPO, DMC, exploit, SB3, RLlib), ``fit.device`` (distill) and ``device``
(the play-out run; ``--device`` for the steps run by hand and ``improve belief``). Its values:

- ``auto`` (the default): the first CUDA device where torch sees one, else the CPU (never ``mps``: ask for it);
- ``cpu``; ``cuda`` (the current CUDA device, normally ``cuda:0``); ``cuda:N`` (device N); ``mps`` (Apple's GPU).

A device the machine does not have is refused in one line naming what it has (:func:`device_problem`): by the
config when it is read (``--set train.device=cpu`` resumes a run made on a GPU on a machine without one), and
by :func:`resolve_device`, which turns the text into a ``torch.device`` when the trainer starts. This module
imports torch only to look for a device (``auto`` and ``cpu`` never need it to be checked), so reading a config
stays light.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .errors import ConfigError

DEVICE_CHOICES = ("auto", "cpu", "cuda", "cuda:N", "mps")
"""The values of a device setting, as the messages name them (N: a CUDA device number, 0 the first)."""
DEVICE_HELP = (
    "auto (CUDA where present, else the CPU), cpu, cuda, cuda:N or mps: the device of the learner's networks and "
    "updates"
)
"""The first words of every device setting's description (each trainer adds what runs where)."""
_SYNTAX = re.compile(r"auto|cpu|mps|cuda(:(0|[1-9][0-9]{0,2}))?")


def _cuda_count() -> int:
    """CUDA devices torch sees (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _mps() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[str]:
    """The devices of this machine a setting may name: ``cpu``, then ``cuda:0`` ... and ``mps`` where present."""
    return ["cpu", *(f"cuda:{k}" for k in range(_cuda_count())), *(["mps"] if _mps() else [])]


def device_problem(text: Any) -> str | None:
    """What is wrong with a device setting (not one of :data:`DEVICE_CHOICES`, or a device this machine lacks),
    in words that name what is allowed; None when it is fine."""
    if not isinstance(text, str) or not _SYNTAX.fullmatch(text):
        return "must be one of " + ", ".join(DEVICE_CHOICES) + " (N: a CUDA device number, 0 the first)"
    if text in ("auto", "cpu"):
        return None
    here = ", ".join(["auto", *available_devices()])
    if text == "mps":
        return None if _mps() else f"this machine has no MPS device (it has: {here})"
    count = _cuda_count()
    if count == 0:
        return f"this machine has no CUDA device (it has: {here})"
    index = int(text.partition(":")[2] or 0)
    if index >= count:
        return f"this machine has no CUDA device {index} (it has: {here})"
    return None


def check_device(text: Any) -> str:
    """``text`` if it is a device setting this machine can run (the config's check); else a ValueError whose
    message is :func:`device_problem`'s."""
    problem = device_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


def resolve_device(text: str, key: str = "train.device") -> Any:
    """The ``torch.device`` of a device setting (``auto``: ``cuda:0`` where CUDA is, else ``cpu``; ``cuda``: the
    current CUDA device); a :class:`ConfigError` naming ``key`` (the setting or option that gave it) and what
    this machine has when it cannot run there."""
    import torch

    problem = device_problem(text)
    if problem is not None:
        raise ConfigError(f"{key}: {problem}, got {text!r:.40}", key, problem)
    if text == "auto":
        text = "cuda" if _cuda_count() else "cpu"
    if text == "cuda":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device(text)


def module_device(module: Any) -> Any:
    """The device of a torch module's parameters (the CPU for one without any)."""
    import torch

    return next((p.device for p in module.parameters()), torch.device("cpu"))


def on_cpu(value: Any) -> Any:
    """``value`` with every tensor in it (in mappings, lists and tuples, at any depth) on the CPU, what every
    checkpoint holds so that it loads anywhere. What holds no tensor elsewhere is returned as it is (the same
    object: a CPU run saves what it saved before); a mapping copied keeps its type and attributes (a state
    dict's ``_metadata``)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, dict):
        moved = {key: on_cpu(item) for key, item in value.items()}
        if all(moved[key] is item for key, item in value.items()):
            return value
        out = copy.copy(value)
        out.update(moved)
        return out
    if type(value) in (list, tuple):
        items = [on_cpu(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
    return value
