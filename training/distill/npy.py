"""The one reader of a ``.npy`` entry's header, for every data file of the pipeline (the search's shards,
:mod:`training.distill.data`; the play-outs' files, :mod:`training.distill.data_playouts`): what an entry
declares is known, and checked by its reader, before any of its data is read."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

import numpy as np

VERSIONS = ((1, 0), (2, 0))
"""The ``.npy`` format versions ``np.savez`` and ``np.savez_compressed`` write."""


def read_header(stream: BinaryIO, where: str, error: Callable[[str], ValueError]) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype the ``.npy`` header at ``stream`` declares, the stream left at the start of the data.
    A format version numpy's writers do not write, or Fortran order, is ``error(f"{where}: ...")``; a header
    longer than numpy's own limit, or no ``.npy`` magic at all, is numpy's ValueError."""
    version = np.lib.format.read_magic(stream)
    if version not in VERSIONS:
        raise error(f"{where}: .npy format version {version} is not one np.savez writes")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(stream)
    if fortran:
        raise error(f"{where}: holds {dtype} {list(shape)} in Fortran order; np.savez writes C order")
    return tuple(shape), dtype
