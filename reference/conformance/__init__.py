"""Conformance: checking any implementation of one of the spec's algorithms against the spec (``formal-transformers
conform``) — torch-free, unless the function checked needs torch.

- :mod:`.conform` checks a function on the spec's examples (:mod:`formal.sampling`: boundary cases and random
  ones), within the bounds of :mod:`reference.tolerances`, for the properties of
  :mod:`.properties`;
- :mod:`.targets` is the function under test, called as the spec is, through :mod:`.sandbox` (a worker
  process: time limit, exits, output captured); :mod:`.loading` finds it by name and :mod:`.outputs` reads
  what it returns as the spec's outputs;
- :mod:`.identify` searches the variants a function conforms to (``conform --identify``); :mod:`.candidates`
  is its report: the variants tried, how far each got, the nearest;
- :mod:`.settings` holds conform's limits and defaults (importing nothing).
"""
