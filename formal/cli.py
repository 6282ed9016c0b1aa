"""Deprecated: the command line is :mod:`formal.tools.cli` (``formal-transformers`` and ``python -m formal`` run
it).  This name, its module before 0.2, still gives :func:`main` and says so once; it is one of the tools' front
doors, not part of the specification."""

import warnings

from .tools.cli import main

__all__ = ["main"]

warnings.warn('"formal.cli" is now "formal.tools.cli"', DeprecationWarning, stacklevel=2)
