"""The examples the spec implies: seeded random calls of every algorithm and variant, boundary cases first —
derived from the algorithm objects alone (numpy and sympy, no torch).  ``conform``, ``verify``, the claims'
property checks and the theorems of :mod:`proofs` draw from here.

- :mod:`.examples` — an example: an algorithm object, its sizes, its inputs and parameters, and the seed;
- :mod:`.variants` — the options of an example, drawn from each option's declared examples and mended where
  the declarations say two values cannot go together;
- :mod:`.sizes` — the sizes, drawn for every symbol and mended until every constraint the algorithm states
  holds;
- :mod:`.ties` — sizes fixed or tied to others (``conform --size d_attn=d_x/H``);
- :mod:`.memory` — what the examples' arrays take, estimated before any is drawn and refused past the memory
  limit (a tie or an option such as ``n_kv_heads`` can make a size grow);
- :mod:`.softmaxes` — which parameters feed an algorithm's softmaxes (the large-scores boundary case);
- :mod:`.rounding_cases` — the cases that bring lower-precision bugs out (a long flat softmax row, norm inputs
  with a common offset, the table's last position, large logits), for ``verify``'s float32 and bfloat16 rows;
- :mod:`.profiles` — how many examples a run draws and how large they grow (importing nothing).
"""
