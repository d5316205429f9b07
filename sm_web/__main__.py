"""``python -m sm_web serve|view ...``."""

import sys

from .cli import main

sys.exit(main())
