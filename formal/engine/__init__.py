"""The engine: an algorithm written once as data (:mod:`.algorithm`: lines, loops, calls of other algorithms),
its abstract interpretation over symbolic shapes (:mod:`.derivation`) and over numpy arrays
(:mod:`.execution`), the renaming a call of another algorithm makes (:mod:`.calls`), its options — declared
with their domains (:mod:`.declarations`, :mod:`.domains`), read from the command line and listed
(:mod:`.options`) — and its rendering as text, LaTeX and JSON (:mod:`.render`, prose in LaTeX:
:mod:`.latex_text`).

The four modules algorithm ↔ calls ↔ derivation ↔ execution import each other lazily, by design: an
algorithm derives itself on first use.  That is the package's one circle of imports.
"""
