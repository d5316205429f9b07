"""The folder a new run goes to (every trainer's, ``sergeant-major eval``'s): standard library only."""

from __future__ import annotations

import os


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
