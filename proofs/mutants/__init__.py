"""The shipped catalogue of bugs planted in the spec, for ``prove --mutants``: one module per family, each
declaring ``MUTANTS`` (:class:`~proofs.mutants.entry.SpecMutant` entries)."""
