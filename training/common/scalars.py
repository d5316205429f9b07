"""TensorBoard scalars of the trainers the project owns (vector PPO, DMC, the play-outs), in ``RUN/tb`` as the SB3
and RLlib routes write theirs (``tensorboard --logdir RUN/tb``; ``train.tensorboard``, the play-outs'
``tensorboard``).

Written from the rows a run already logs, never read back: each ``metrics.jsonl`` row (:func:`metrics_scalars`)
and each evaluation (``training.evaluation.evaluate.eval_scalars``: ``eval/<opponent>/<role>_advantage``, ...),
at the run's own step (decisions, or a play-out round's decisions labelled). The tags are the library routes':
``rollout/balance_<role>``, ``rollout/quota_rate``, ``time/decisions_per_second``, ``train/<loss>``.
The writer is made at the first scalar (torch's ``SummaryWriter``, which needs the ``tensorboard`` package of
the training extra) and flushed at every checkpoint; a resumed run hides what the stopped call wrote past its
checkpoint (``purge_step``).
"""

from __future__ import annotations

import math
import os
from typing import Any

TB = "tb"  # the run folder's TensorBoard folder
ROLLOUT = ("episodes", "hands", "quota_rate", "actor_lag")  # metrics.jsonl keys of the rollout's play
TIME = {"sps": "decisions_per_second", "wall": "train_seconds", "network_share": "network_share"}
COUNTERS = ("global_step", "rollout")  # the step itself, not a scalar


def metrics_scalars(row: dict[str, Any]) -> dict[str, float]:
    """The TensorBoard tags of one ``metrics.jsonl`` row: ``rollout/`` the play (``balance_<role>``, episodes,
    hands, quota_rate), ``time/`` the speed and the training seconds, ``train/`` the rest (losses, entropy, KL,
    explained variance, learning rate); figures that are no finite number (none measured) are left out."""
    out: dict[str, float] = {}
    for key, value in row.items():
        if key in COUNTERS or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value):
            continue
        if key in TIME:
            tag = f"time/{TIME[key]}"
        elif key in ROLLOUT or key.startswith("balance_"):
            tag = f"rollout/{key}"
        else:
            tag = f"train/{key}"
        out[tag] = float(value)
    return out


class ScalarLog:
    """``RUN/tb``'s writer, made at the first scalar; a silent one when not ``enabled``. ``purge_step``: the
    step a resumed run goes on from (events written at or past it by an earlier call are hidden)."""

    def __init__(self, run_dir: str, enabled: bool, purge_step: int | None = None) -> None:
        self.folder, self.enabled, self.purge_step = os.path.join(run_dir, TB), enabled, purge_step
        self.writer: Any = None

    def scalars(self, values: dict[str, float], step: int) -> None:
        """Each ``tag: value`` at ``step`` (NaN and infinite values left out)."""
        if not self.enabled:
            return
        if self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(self.folder, purge_step=self.purge_step or None)
        for tag, value in values.items():
            if value is not None and math.isfinite(value):
                self.writer.add_scalar(tag, value, step)

    def flush(self) -> None:
        """What was written, onto the disk (at every checkpoint)."""
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        """Flush and close the event file (a later scalar opens a new one)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
