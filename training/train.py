"""``python -m training.train``: the training command line (the same as ``sergeant-major train``).

The parts live in their own modules: the config schema (training/config.py),
the training environment (training/single_agent.py), the warm start
(training/warm_start.py), the checkpoint format (training/checkpoint.py),
the trainer (training/trainer.py), the evaluation of a trained policy
(training/evaluate.py) and the command line (training/cli.py).
"""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
