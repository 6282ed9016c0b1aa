"""Whole models: the presets of published models (:mod:`.presets`), model configuration files
(:mod:`.config`), what a model costs (:mod:`.complexity`, the ``complexity`` command's figures), the presets'
derived cost formulas shipped as data so that ``complexity`` needs no sympy (:mod:`.costcache`), and Vaswani
et al.'s Table 1 derived from the layers' objects (:mod:`.table1`).
"""
