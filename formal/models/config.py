"""Model configuration files (TOML) for ``formal-transformers complexity --config``.

A configuration is data, read with a TOML parser; nothing in it is executed::

    name = "my-gpt"             # optional
    algorithm = "dtransformer"  # edtransformer, etransformer or dtransformer
    seq_len = 1024              # optional: the default sequence length (else a length given in [sizes])
    [options]                   # the algorithm's options, e.g. norm = "rms"
    tied = true
    [sizes]                     # the sizes by their names (n_classes), or as `show` writes them (N_C)
    N_V = 50257
    ell_max = 1024
    d_e = 768
    L = 12
    H = 12
    d_mlp = 3072
"""

from __future__ import annotations

from ..errors import ConfigError, shown
from ..guards.files import read_toml
from .presets import LENGTHS, check_size

__all__ = ["load_config", "size_names", "KEYS"]

KEYS = ("name", "algorithm", "seq_len", "options", "sizes")


def load_config(path: str):
    """``(name, algorithm, options, sizes, seq_len)`` from a TOML file; a :class:`ConfigError` names what is
    wrong (an unreadable or irregular file, bytes that are not UTF-8, malformed TOML, an unknown key, a wrong
    type); see :func:`formal.guards.files.read_toml`."""
    data = read_toml(path, what="config file")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(f"config file {shown(path)} has an unknown key {shown(unknown[0])}; known: {', '.join(KEYS)}")
    algorithm = data.get("algorithm")
    if not isinstance(algorithm, str):
        raise ConfigError(f"config file {shown(path)} needs algorithm = \"dtransformer\" "
                          "(or etransformer, edtransformer)")
    options, sizes = data.get("options", {}), data.get("sizes", {})
    for key, table in (("options", options), ("sizes", sizes)):
        if not isinstance(table, dict):
            raise ConfigError(f"config file {shown(path)}: [{key}] must be a table, got {shown(table)}")
    sizes = {key: check_size(f"config file {path!r}: size {key}", value) for key, value in sizes.items()}
    seq_len = data.get("seq_len")
    if seq_len is not None:
        seq_len = check_size(f"config file {path!r}: seq_len", seq_len)
    seq_len = _length(path, sizes, seq_len)
    name = data.get("name", path)
    return str(name), algorithm, dict(options), dict(sizes), seq_len


def _length(path, sizes: dict, seq_len):
    """The default sequence length: ``seq_len``, else a sequence length the sizes give (a ViT's ``ell``), which
    would otherwise be replaced by another; the two must agree."""
    lengths = {k: sizes[k] for k in LENGTHS if k in sizes}
    if len(set(lengths.values()) | ({seq_len} if seq_len is not None and lengths else set())) > 1:
        given = ", ".join(f"{k} = {v}" for k, v in lengths.items())
        raise ConfigError(f"config file {shown(path)}: {given}{'' if seq_len is None else f' and seq_len = {seq_len}'}"
                          " disagree: a model's sequence lengths are one length")
    return seq_len if seq_len is not None or not lengths else next(iter(lengths.values()))


def size_names(sizes: dict, known, *, where: str = "config file") -> dict:
    """``sizes`` with each key that is not one of the ``known`` size names but is how the text view writes one
    (``N_C`` for ``n_classes``, ``n_s`` for ``n_sent``, ``ℓ`` for ``ell``) renamed to that name: a file may
    name a size as ``show`` and ``complexity --symbolic`` print it.  A ConfigError when two keys give one size.
    Imports sympy (the symbols' table) only for a file that uses such a spelling."""
    known = set(known)
    if all(key in known for key in sizes):
        return dict(sizes)
    from ..core.symbols import by_name, info
    glyphs = {info(by_name(name)).glyph: name for name in known}
    out, given = {}, {}
    for key, value in sizes.items():
        name = key if key in known else glyphs.get(key, key)
        if name in out:
            raise ConfigError(f"{where}: sizes {given[name]} and {key} are one size ({name}): give one")
        out[name], given[name] = value, key
    return out
