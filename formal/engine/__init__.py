"""The engine: an algorithm written once as data (:mod:`.algorithm`: lines, loops, calls of other algorithms),
its abstract interpretation over symbolic shapes (:mod:`.derivation`) and over numpy arrays
(:mod:`.execution`), the renaming a call of another algorithm makes (:mod:`.calls`), its options read from
the command line (:mod:`.options`) and its rendering as text, LaTeX and JSON (:mod:`.render`).

The four modules algorithm ↔ calls ↔ derivation ↔ execution import each other lazily, by design: an
algorithm derives itself on first use.  That is the package's one circle of imports.
"""
