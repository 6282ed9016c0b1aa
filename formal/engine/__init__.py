"""The engine: an algorithm written once as data (:mod:`.algorithm`: lines, loops, calls of other algorithms),
its abstract interpretation over symbolic shapes (:mod:`.derivation`) and over numpy arrays, and the fast paths
that must agree with that definition.

- the definition's execution: :mod:`.execution` walks the lines, reading what it needs of them once
  (:mod:`.lines`) and binding the arguments to the sizes as it goes (:mod:`.binding`);
- the fast paths, each checked against it: :mod:`.tape` replays a checked run's steps (:mod:`.steps`),
  :mod:`.batches` runs every trip of an independent loop at once, :mod:`.columns` every column of a column call
  at once, and :mod:`.program` is what a batched loop or a column call records to run again; every path rounds
  each op's result where :mod:`.precision` emulates float32 or bfloat16 (the baseline of the reference's
  lower-precision checks);
- :mod:`.calls` — the renaming a call of another algorithm makes; :mod:`.signature` — a signature entry as the
  renderings write it; :mod:`.meaning` — the symbolic meaning of an algorithm's lines (what the
  theorems read); :mod:`.hyper` — the hyperparameters an algorithm lists;
- its options — declared with their domains (:mod:`.declarations`, :mod:`.domains`), read from the command line
  and listed (:mod:`.options`) — and its rendering as text, LaTeX and JSON (:mod:`.render`, prose in LaTeX:
  :mod:`.latex_text`; the pseudocode in a notebook: :mod:`.display`); :mod:`.names` — from a value's ASCII name to its
  symbol.

The modules algorithm ↔ calls ↔ derivation ↔ execution ↔ lines, with the fast paths tape, batches and
columns, import each other lazily, by design: an algorithm derives itself on first use, and a fast path replays
what the executor checked.  That is the package's one circle of imports (``tests/test_architecture.py`` names
its every file).
"""
