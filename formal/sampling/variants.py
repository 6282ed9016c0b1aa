"""The options of an example: each one not fixed is drawn from its declaration's ``examples``
(:class:`formal.engine.declarations.Option`), then the draw is mended where the declarations say two values cannot
go together — an option that applies only with another's value (``reset`` with ``cell = 'gru'``), a
:class:`~formal.engine.declarations.Requires` rule (``padding = 'same'`` needs ``stride = 1``) — moving what was
drawn, never what was fixed.  The same data the builders validate with: no choice is restated here.

What was fixed narrows the draws first: a fixed ``patch_order = 'channel-last'`` applies with the image input
only, so ``inputs`` is drawn from ``('image',)``, and ViT's inputs then need the classifier head.  With every
option fixed (conform on an algorithm object) nothing is drawn, and the random generator is not touched.

:func:`every_variant` enumerates instead of drawing (``verify --variants``): every combination of the same
values, an option without effect under another's value at its default, those a rule rejects set aside with
the rule.
"""

from __future__ import annotations

from .. import algorithms
from ..engine.declarations import same_value
from ..errors import ConfigError

__all__ = ["EXAMPLE_ALGORITHMS", "trains", "draw_options", "every_variant"]


def trains(algorithm) -> bool:
    """Whether ``algorithm`` takes gradient steps (Algorithms 11–13), which the numpy spec does not execute."""
    from ..algorithms.training import GradStepOp
    from ..engine.execution import flat_lines
    return any(isinstance(getattr(line.expr, "op", None), GradStepOp) for line in flat_lines(algorithm.lines))


#: The algorithms examples exist for, in the registry's order: every algorithm but the training algorithms,
#: whose gradient the numpy spec does not compute — they are checked through their losses (``dloss``,
#: ``eloss``, ``edloss``: the spec's loss, and ``verify``'s SGD step against its finite differences).
EXAMPLE_ALGORITHMS = tuple(name for name, a in algorithms.ALGORITHMS.items() if not trains(a))


def _among(values, allowed) -> tuple:
    return tuple(v for v in values if any(same_value(v, a) for a in allowed))


def _outside(values, excluded) -> tuple:
    return tuple(v for v in values if not any(same_value(v, e) for e in excluded))


def _narrowed(specs, fixed) -> dict:
    """Option → the values an example may give it: the fixed value, or its examples less those the fixed
    values (and the options narrowed to one value) rule out."""
    allowed = {name: (fixed[name],) if name in fixed else option.examples for name, option in specs.items()}

    def narrow(name, values):
        values = values or allowed[name]           # nothing left: the builder will name the conflict
        changed = values != allowed[name]
        allowed[name] = values
        return changed

    changed = True
    while changed:
        changed = False
        for name, option in specs.items():
            if option.applies:
                control, values = option.applies
                if len(allowed[name]) == 1 and not same_value(allowed[name][0], option.default):
                    changed |= narrow(control, _among(allowed[control], values))
                if len(allowed[control]) == 1 and not _among(allowed[control], values):
                    changed |= narrow(name, (option.default,))
        for rule in specs.rules:
            if len(allowed[rule.other]) == 1 and not _among(allowed[rule.other], rule.allowed):
                changed |= narrow(rule.option, _outside(allowed[rule.option], rule.values))
            if len(allowed[rule.option]) == 1 and _among(allowed[rule.option], rule.values):
                changed |= narrow(rule.other, _among(allowed[rule.other], rule.allowed) or rule.allowed)
    return allowed


def _broken(specs, options):
    """The first thing the draw breaks: ``("applies", name)`` or ``("rule", rule)``; None when it holds."""
    for name, option in specs.items():
        if not specs.applies(name, options) and not same_value(options[name], option.default):
            return "applies", name
    for rule in specs.rules:
        if rule.broken(options):
            return "rule", rule
    return None


def _moves(specs, broken, options, allowed) -> list:
    """``(option, value)`` moves that mend ``broken``, in the order the declarations prefer."""
    kind, what = broken
    if kind == "applies":
        control, values = specs[what].applies
        return [(what, specs[what].default)] + [(control, v) for v in _among(allowed[control], values)[:1]]
    rule = what
    other = [(rule.other, v) for v in (_among(allowed[rule.other], rule.allowed) or rule.allowed)[:1]]
    default = specs[rule.option].default
    away = (default,) if not _among((default,), rule.values) else _outside(allowed[rule.option], rule.values)
    option = [(rule.option, v) for v in away[:1]]
    return other + option if rule.move == "other" else option + other


def draw_options(specs, rng, fixed: dict, owner: str) -> dict:
    """Every option of the declarations ``specs``: ``fixed`` as given, the others drawn with ``rng`` (one draw
    each, in declaration order, so the same seed gives the same options) and mended; each option moves at
    most once.  A ConfigError when the fixed options leave no example."""
    allowed = _narrowed(specs, fixed)
    options = {}
    for name in specs:
        options[name] = fixed[name] if name in fixed else allowed[name][int(rng.integers(len(allowed[name])))]
    moved = set(fixed)
    for _ in range(2 * len(specs) + len(specs.rules) + 1):
        broken = _broken(specs, options)
        if broken is None:
            return options
        move = next(((name, value) for name, value in _moves(specs, broken, options, allowed) if name not in moved),
                    None)
        if move is None:
            break
        options[move[0]] = move[1]
        moved.add(move[0])
    kind, what = _broken(specs, options)
    broken = what.text() if kind == "rule" else f"{what} applies to {specs[what].applies[0]} = " + " or ".join(
        map(repr, specs[what].applies[1])) + " only"
    raise ConfigError(f"no example of {owner} has the options {fixed}: {broken}")


# ------------------------------------------------------------------------------------------ every variant
def _controls_first(specs) -> list:
    """The option names, each after the option it applies with (``score`` before ``align_bias``)."""
    order, placed = [], set()
    while len(order) < len(specs):
        for name, option in specs.items():
            if name not in placed and (not option.applies or option.applies[0] in placed):
                order.append(name)
                placed.add(name)
    return order


def option_groups(specs, fixed) -> tuple:
    """``(varied, apart)``: the option names of the product — those of no group (:attr:`Option.group`) and of every
    group one of whose options is ``fixed`` — and the other groups, each a tuple of its option names, in order."""
    groups: dict = {}
    for name, option in specs.items():
        if option.group:
            groups.setdefault(option.group, []).append(name)
    joined = {g for g, names in groups.items() if any(n in fixed for n in names)}
    varied = {n for n, o in specs.items() if not o.group or o.group in joined}
    return varied, tuple(tuple(names) for g, names in groups.items() if g not in joined)


def _combinations(specs, fixed):
    """Every assignment of the options' example values (``fixed`` ones as given), an option that has no effect
    under its control's value (``reset`` with ``cell = 'lstm'``) at its default only, in declaration order: the
    product of the options of no group (and of a group the run fixes an option of), the other groups at their
    defaults; then each other group's own combinations, everything else at its default (or fixed) value."""
    order = _controls_first(specs)

    def walk(i, values, vary):
        if i == len(order):
            yield {name: values[name] for name in specs}
            return
        name = order[i]
        option = specs[name]
        choices = (fixed[name],) if name in fixed else option.examples if name in vary else (option.default,)
        if not specs.applies(name, values):   # its control is assigned: it keeps its default
            choices = (option.default,) if name not in fixed else _among(choices, (option.default,))
        for value in choices:
            values[name] = value
            yield from walk(i + 1, values, vary)
        values.pop(name, None)

    varied, apart = option_groups(specs, fixed)
    yield from walk(0, {}, varied)
    for names in apart:
        for options in walk(0, {}, set(names)):
            if not all(same_value(options[n], specs[n].default) for n in names):   # the default one came first
                yield options


def every_variant(name: str, fixed: dict | None = None) -> tuple:
    """``(variants, skipped)`` of algorithm ``name``: ``variants`` every combination of its options' example
    values (:attr:`~formal.engine.declarations.Option.examples`: every value of a finite domain, the stated
    ones of a range; ``fixed`` options as given), in declaration order, an option with no effect under another's
    value at its default; ``skipped`` the ``(options, reason)`` of each combination that breaks a
    :class:`~formal.engine.declarations.Requires` rule, the reason the rule's text.  Nothing is built (a
    builder that refuses a combination says so when its task runs): 80,000 variants are counted in a second."""
    fixed = dict(fixed or {})
    specs = algorithms.get(name).option_specs
    unknown = sorted(set(fixed) - set(specs))
    if unknown:
        raise ConfigError(f"{name} has no option {unknown[0]!r}; its options: {', '.join(specs) or 'none'}")
    variants, skipped = [], []
    for options in _combinations(specs, fixed):
        rule = next((r for r in specs.rules if r.broken(options)), None)
        if rule is None:
            variants.append(options)
        else:
            skipped.append((options, rule.text()))
    return variants, skipped
