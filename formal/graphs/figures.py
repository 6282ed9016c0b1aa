"""What ``graph`` reports about a pattern, as plain data: edges and their formula, density, in-degrees, attention
FLOPs against dense attention, and the receptive field per layer, layers to full coverage and maximum path
length (:func:`collect`; ``graph --json`` prints it, :func:`formal.graphs.report` returns it).

Every count — edges, degrees, FLOPs, receptive-field sizes and spans, layers — is an exact Python int, at any
size.  The density, the means and the FLOP ratio are floats: each the float nearest the exact quotient of two
of those ints (``/`` of Python ints rounds once), never a count computed through a float."""

from __future__ import annotations

__all__ = ["collect"]


def collect(p, *, layers: int, heads: int, d_head: int, progress=None) -> dict:
    """Everything the command prints, as plain data, for a pattern or a structure (``progress``: a stream for a
    live line on long runs)."""
    from ..core.symbols import text
    from . import analysis, patterns
    from .structure import Structure
    degree = p.in_degree_spread() if isinstance(p, Structure) else _degree_spread(p.in_degree)
    result = {"pattern": p.name, "params": p.params, "self_attention": p.self_attention,
              "ell_z": p.ell_z, "ell_x": p.ell_x, "edges": p.n_edges, "density": p.density, "in_degree": degree}
    if p.name in patterns.PATTERNS:
        exact, values = analysis.symbolic_edge_count(p)
        regime, conditions, holds = analysis.edge_count_regime(p)
        result["formula"] = {"exact": text(exact),
                             "values": {str(k): int(v) for k, v in sorted(values.items(), key=lambda kv: str(kv[0]))},
                             "simplified": text(regime), "when": [f"{text(c)} ≥ 0" for c in conditions],
                             "simplified_applies": holds}
    d_model = heads * d_head
    sizes = {"H": heads, "d_attn": d_head, "d_mid": d_head, "d_x": d_model, "d_z": d_model, "d_out": d_model}
    flops = analysis.attention_flops(p, sizes)
    result["flops"] = {"sparse": flops["sparse"], "dense": flops["dense"],
                       "ratio": flops["ratio"], "convention": "matmul", "heads": heads, "d_head": d_head,
                       "sparse_formula": text(flops["sparse_formula"])}
    result["layers"] = _layered(p, layers, progress)
    return result


def _layered(p, layers, stream=None):
    """Receptive fields, coverage and path length; a live ``what: layer N`` line on ``stream`` if a terminal."""
    from . import analysis, memory
    if not p.self_attention:
        return {"skipped": "cross-attention: queries never become keys, so layers do not compose"}
    live = stream is not None and getattr(stream, "isatty", lambda: False)()

    def tracker(what):
        def show(layer):
            if layer % 16 == 0:
                stream.write(f"\r\033[K{what}: layer {layer:,}")
                stream.flush()
        return show if live else None

    memory.require(memory.report_bytes(layers), f"the report of {memory.number(layers)} layers (a row each)")
    # One walk each, with and without the residual path; each layer is computed once, and none past the
    # point where the receptive fields settle (the rows after it repeat).  A structure needs no walk.
    grown = analysis.summary(p, layers, progress=tracker("full coverage"))
    plain = analysis.summary(p, layers, residual=False, progress=tracker("without the residual path"))
    per_layer = [{"layer": l + 1, "min": least, "mean": mean, "max": most, "min_without_residual": alone[0],
                  "max_span": span}
                 for l, ((least, mean, most), alone, span) in enumerate(zip(grown.spread, plain.spread, grown.span))]
    covered, plain_covered, longest = grown.coverage, plain.coverage, grown.max_path_length
    if live:
        stream.write("\r\033[K")
        stream.flush()
    result = {"receptive_field": per_layer,
              "coverage_target": "earlier positions" if p.is_causal else "all positions",
              "layers_to_coverage": covered, "layers_to_coverage_without_residual": plain_covered,
              "max_path_length": longest}
    if plain.undetermined is not None:  # a user's graph whose states repeat only after astronomically many layers
        result["without_residual_undetermined_after"] = plain.undetermined
    return result


def _degree_spread(values) -> dict:
    """``{"min", "mean", "max", "empty"}`` of a pattern's in-degrees (``empty``: queries that see no key); the
    mean is ``|E|/ℓ_x`` from the exact sum, rounded once, as a structure's."""
    if not values.size:
        return {"min": 0, "mean": 0.0, "max": 0, "empty": 0}
    return {"min": int(values.min()), "mean": int(values.sum()) / values.size,
            "max": int(values.max()), "empty": int((values == 0).sum())}
