"""``python -m sm_cli``: the same as the ``sergeant-major`` command."""

import sys

from .cli import main

sys.exit(main())
