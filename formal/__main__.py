"""``python -m formal``: the same as the ``formal-transformers`` command."""

import sys

from .tools.cli import main

sys.exit(main())
