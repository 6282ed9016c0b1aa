"""Verification of the torch reference against the spec (``formal-transformers verify``), and of verify's checks
and ``conform`` themselves on planted bugs (``verify --mutants``).

- :mod:`.verify` runs a campaign and writes its report: the checks of :mod:`.checks` (float64 equality, both
  attention paths, lower precision within :mod:`reference.tolerances`, FLOPs, parameters, gradients, the
  key/value cache) on the spec's examples (:mod:`formal.sampling`);
- :mod:`.tasks` are its tasks (one algorithm's checks, a group of variants), run on the execution layer
  (:mod:`reference.execution`); :mod:`.campaigns` enumerates ``--variants`` and estimates a run
  (``--dry-run``) from the measured task costs of :mod:`.estimates`;
- :mod:`.mutation` measures conform's kill rate on the catalogue (:mod:`reference.catalogue`) and reports, beside
  it, verify's kill rate per check on the reference's planted bugs, which :mod:`.reference_mutants` lists and
  plants;
- :mod:`.reports` writes a report as JSON, checked before any work and written atomically after it.
"""
