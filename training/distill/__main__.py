"""``python -m training.distill``: a run of the pipeline or one of its steps (see :mod:`training.distill.cli`;
also ``sergeant-major distill``)."""

import sys

from training.distill.cli import main

sys.exit(main())
