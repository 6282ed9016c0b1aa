"""The tests of the spec's examples (formal.sampling)."""
