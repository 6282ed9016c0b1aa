"""The tests of verify, its campaigns and executors, and verify --mutants (reference.verification,
reference.execution)."""
