"""Run folders: where a new run goes, and the one layout of the trainers the project owns (standard library only).

Every run of vector PPO, DMC, exploit, distill and the play-outs (``sergeant-major improve``) is one folder::

    RUN/
      config.yaml         the resolved config (what --resume reads)
      checkpoints/        training states, one format (training/common/checkpoint.py): latest.pt and
                          step_<N>.pt (the batched trainers), fit_r<k>.pt (distill's fit of round k)
      data/               labelled data: r<k>/ (distill's round k), <name>/ (a distill extra_data set),
                          labels/<seed>.npz (the play-outs)
      policies/           the policies on the way (sergeant-major-policy/1; ppo:PATH plays each), the report
                          of a fit beside its policy as <name>.json: r<k>.pt (distill's round k),
                          student.pt and q.pt (the play-outs), <label>.pt (exploit's points)
      final_policy.pt     the policy the run ends with
      metrics.jsonl       one line per rollout (the batched trainers)
      eval.jsonl          one line per evaluation during the run
      final_eval.json     the final evaluation, where there is one
      times.json          the training time summed over the calls (distill, the play-outs: the batched
                          trainers keep theirs in the checkpoint)
      tb/                 TensorBoard scalars (vector PPO, DMC, the play-outs: training/common/scalars.py)
      summary.json        written last: the run is complete

The library routes (SB3, RLlib) share ``config.yaml``, ``checkpoints/`` (in their library's format),
``final_eval.json`` and ``summary.json``. A run folder of an older release is moved into this layout when it is
resumed (:func:`move_old_layout`; each trainer lists its old names).
"""

from __future__ import annotations

import math
import os

from sm_env.files.json_files import JsonError, read_json, write_json

CHECKPOINTS = "checkpoints"
DATA = "data"
POLICIES = "policies"
FINAL_POLICY = "final_policy.pt"
TIMES = "times.json"


def fresh_run_dir(output_dir: str, name: str) -> tuple[str, str]:
    """(run folder, run name) for a new run: ``output_dir/name`` unless it exists and is not
    empty, else the first free ``output_dir/name-N`` (N = 2, 3, ...)."""
    candidate, n = name, 1
    while True:
        path = os.path.join(output_dir, candidate)
        if not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path)):
            return path, candidate
        n += 1
        candidate = f"{name}-{n}"


def move_old_layout(run_dir: str, moves: list[tuple[str, str]]) -> list[str]:
    """Rename each ``(old, new)`` path (relative to ``run_dir``) whose old name exists and new name does not;
    returns the moves made as ``"old -> new"``. A rename within one folder tree is atomic: a run stopped
    half-way is moved on by the next call."""
    done = []
    for old, new in moves:
        source, target = os.path.join(run_dir, old), os.path.join(run_dir, new)
        if os.path.lexists(source) and not os.path.lexists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.replace(source, target)
            done.append(f"{old} -> {new}")
    return done


def training_seconds(run_dir: str) -> float:
    """The training time of the run's earlier calls (``times.json``), 0.0 when there is none to read."""
    try:
        seconds = read_json(os.path.join(run_dir, TIMES), "a run's times")
    except JsonError:
        return 0.0
    seconds = seconds.get("train_seconds") if isinstance(seconds, dict) else None
    ok = type(seconds) in (int, float) and math.isfinite(seconds) and seconds >= 0
    return float(seconds) if ok else 0.0


def save_training_seconds(run_dir: str, seconds: float) -> None:
    """The run's training time so far as ``times.json``, atomically (nothing when the run folder is not there:
    a run that failed before making it)."""
    if not os.path.isdir(run_dir):
        return
    write_json(os.path.join(run_dir, TIMES), {"train_seconds": seconds})
