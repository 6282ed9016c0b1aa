"""The tests of ``conform`` (:mod:`reference.conformance`) run without torch where the tool does; those that need
torch skip themselves without it."""

# Files for `conform` to load by path (targets/): run by the tests, not collected — one of them exits when
# imported.
collect_ignore = ["targets"]
