"""The cost model: :class:`~.cost.Cost` (parameters, FLOPs, memory, depth as sympy polynomials), the named FLOP
conventions (:mod:`.conventions`, plain data), polynomials as plain data for the formulas shipped without
sympy (:mod:`.polynomials`), exact decisions of polynomial inequalities (:mod:`.inequalities`) and the
asymptotics derived from a polynomial (:mod:`.asymptotics`).
"""
