"""Sphinx configuration: `sphinx-build docs docs/_build` (needs the `docs` extra)."""

project = "formal-transformers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
html_theme = "alabaster"
