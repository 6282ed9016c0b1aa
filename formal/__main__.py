"""``python -m formal``: the same as the ``formal-transformers`` command."""

import sys

try:
    from .tools.cli import main
except KeyboardInterrupt:       # Ctrl-C while the command line is still being imported: no traceback
    sys.exit(130)

sys.exit(main())
