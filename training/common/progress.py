"""Progress bars for the long loops (warm start, training, evaluation): tqdm, or a silent stand-in."""

from __future__ import annotations

from typing import Any


class _NoBar:
    """What a disabled bar offers: update, close, and use in a ``with`` block."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(total: int, desc: str, unit: str, enabled: bool = True, initial: int = 0, leave: bool = False) -> Any:
    """A tqdm bar on stderr (``leave``: keep it on screen when done); a silent one when not ``enabled``."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with the training extra
        return _NoBar()
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, unit_scale=True, dynamic_ncols=True, leave=leave)
