"""``python -m training.distill``: run a distillation config (see :mod:`training.distill.fit`; also
``sergeant-major distill``)."""

import sys

from training.distill.fit import main

sys.exit(main())
