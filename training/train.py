"""``python -m training.train``: the training command line (the same as ``sergeant-major train``), for every
backend: ``sb3`` (:mod:`training.sb3`), ``vector`` and ``dmc`` (:mod:`training.vector`), ``rllib``
(:mod:`training.rllib`), picked by the config file's ``kind:`` (or ``--backend``).

The command line itself is :mod:`training.cli`; the run layer every backend shares (run folders, ``--config``,
``--resume``, ``--set``, Ctrl-C, the closing table) is :mod:`training.common.runs`, the evaluation of a trained
policy (``--evaluate``) :mod:`training.evaluation.evaluate`. The distillation pipeline and the exploiter have
commands of their own (``sergeant-major distill`` / ``improve``, ``sergeant-major exploit``).
"""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
