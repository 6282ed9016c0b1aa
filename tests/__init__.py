"""The tests of formal-transformers, a package so that they import what they share by its package path.

The folders mirror the packages: ``formal``, ``graphs``, ``sampling``, ``claims``, ``proofs``, ``reference/model``
(the torch reference), ``reference/conformance`` (conform), ``reference/verification`` (verify, its campaigns and
executors, the mutant catalogue), ``docs``; the tests of the whole project sit at the top.  What several folders
share: :mod:`tests.strategies` (hypothesis strategies) and :mod:`tests.oracles` (independent oracles).
"""
