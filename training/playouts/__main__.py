"""``python -m training.playouts``: a play-out run or one of its steps (see :mod:`training.playouts.cli`; also
``sergeant-major improve``)."""

import sys

from training.playouts.cli import main

sys.exit(main())
