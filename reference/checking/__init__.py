"""Checking implementations against the spec: torch-free, unless a target or a check needs torch.

- :mod:`.records` gathers one record per algorithm — the roles and properties its formal object declares,
  its correct implementation, tolerances and mutants (:mod:`.mutants`), its torch runner — from the
  algorithm object; everything below reads it;
- :mod:`.conform` checks any implementation on :mod:`.examples` (boundary cases and random ones), calling it
  through :mod:`.targets` and :mod:`.sandbox` (a worker process: time limit, exits, output captured;
  :mod:`.loading` finds the function, :mod:`.outputs` reads what it returns), within :mod:`.tolerances`,
  for the properties of :mod:`.properties`; :mod:`.identify` searches the variants a function conforms to
  (``conform --identify``), reported by :mod:`.identified`;
- :mod:`.verify` checks the torch reference (:mod:`reference.model`) against the spec (needs torch): the
  checks of :mod:`.checks`, in worker processes (:mod:`.workers`), the JSON report by :mod:`.reports`;
- :mod:`.mutation` measures conform's kill rate on :mod:`.mutants`, the catalogue of correct numpy
  implementations and planted bugs;
- :mod:`.claims` decides ``check``'s property and implementation claims; :mod:`.commands` registers
  ``conform`` and ``verify`` with the front door.
"""
