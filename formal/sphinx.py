"""Deprecated: the Sphinx extension is :mod:`formal.tools.sphinx` — write ``extensions = ["formal.tools.sphinx"]``.

This name, the extension's before 0.2, still works and says so once; it is one of the tools' front doors, not
part of the specification (which never imports a tool).
"""

import warnings

from .tools.sphinx import setup

__all__ = ["setup"]

warnings.warn('the Sphinx extension "formal.sphinx" is now "formal.tools.sphinx": write extensions = '
              '["formal.tools.sphinx"] in conf.py', DeprecationWarning, stacklevel=2)
