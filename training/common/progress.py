"""Progress bars for the long loops (warm start, training, evaluation): tqdm, or a silent stand-in; and
:func:`write_line`, a progress line on stderr that leaves the bars on screen intact."""

from __future__ import annotations

import sys
from typing import Any


class _NoBar:
    """What a disabled bar offers: update, a total to set, refresh, close, and use in a ``with`` block."""

    total: int | None = None

    def update(self, n: int = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(
    total: int | None,
    desc: str,
    unit: str,
    enabled: bool = True,
    initial: int = 0,
    leave: bool = False,
    smoothing: float = 0.3,
) -> Any:
    """A tqdm bar on stderr (``leave``: keep it on screen when done; ``total`` None: a count and a rate, no ETA);
    a silent one when not ``enabled``. ``smoothing``: tqdm's, 0 for the average rate since the start (a steady
    ETA for a loop whose steps come in bursts, as rollouts then updates)."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with the training extra
        return _NoBar()
    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit=unit,
        unit_scale=True,
        dynamic_ncols=True,
        leave=leave,
        smoothing=smoothing,
    )


def write_line(message: str) -> None:
    """``message`` on stderr, flushed; above the open tqdm bars, which stay whole below it."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with the training extra
        print(message, file=sys.stderr, flush=True)
        return
    tqdm.write(message, file=sys.stderr)
    sys.stderr.flush()
