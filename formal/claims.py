"""Deprecated: the claims checker is :mod:`formal.tools.claims` (``from formal.tools.claims import check_file``).

This name, the checker's before 0.2, still gives :func:`check_file` and :func:`check_text` and says so once; it is
one of the tools' front doors, not part of the specification (which never imports a tool).
"""

import warnings

from .tools.claims import check_file, check_text

__all__ = ["check_file", "check_text"]

warnings.warn('"formal.claims" is now "formal.tools.claims"', DeprecationWarning, stacklevel=2)
