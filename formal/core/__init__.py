"""The spec's vocabulary: size symbols (:mod:`.symbols`), tensor shapes and their unification
(:mod:`.shapes`), the conditions an algorithm states on its sizes (:mod:`.constraints`) and attention masks
(:mod:`.masks`).

Nothing here is imported on ``import formal``; each module imports sympy or numpy only where it needs them.
"""
