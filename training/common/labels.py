"""What the trainers that fit search labels share about their data (numpy only): a search gives every legal move
of a decision it labels a finite value, so a label with a NaN or infinite value there is damage, not data."""

from __future__ import annotations

import numpy as np

__all__ = ["NOT_FINITE", "unfinite_legal"]

NOT_FINITE = "a legal move's {what} is not finite"
"""The reason given for a row :func:`unfinite_legal` finds (``what``: "value", "result", ...)."""


def unfinite_legal(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """bool [rows]: whether a legal move's entry of ``values`` (float [rows, A]; ``legal`` bool [rows, A]) is
    NaN or infinite. Illegal moves' entries are not looked at (NaN there means no move)."""
    return (legal & ~np.isfinite(values)).any(axis=1)
