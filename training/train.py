"""``python -m training.train``: the training command line (the same as ``sergeant-major train``).

The parts live in their own modules: the config schema (training/sb3/config.py),
the training environment (training/sb3/single_agent.py), the warm start
(training/sb3/warm_start.py), the checkpoint format (training/sb3/checkpoint.py),
the trainer (training/sb3/trainer.py), the evaluation of a trained policy
(training/evaluation/evaluate.py) and the command line (training/cli.py).
"""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
