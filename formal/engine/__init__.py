"""The engine: an algorithm written once as data (:mod:`.algorithm`: lines, loops, calls of other algorithms),
its abstract interpretation over symbolic shapes (:mod:`.derivation`) and over numpy arrays
(:mod:`.execution`, reading what it needs of the lines once: :mod:`.lines`; every column of a column call at
once where its callee can: :mod:`.columns`), the renaming a call of another algorithm makes (:mod:`.calls`),
its options — declared with their domains (:mod:`.declarations`, :mod:`.domains`), read from the command
line and listed (:mod:`.options`) — and its rendering as text, LaTeX and JSON (:mod:`.render`, prose in LaTeX:
:mod:`.latex_text`).

The modules algorithm ↔ calls ↔ derivation ↔ execution (with lines and columns) import each other lazily, by
design: an algorithm derives itself on first use.  That is the package's one circle of imports.
"""
