"""The torch reference implementation of the model stack (its modules need torch; :mod:`.runners` does not).

- One module per family of :mod:`formal.algorithms`, named as there: :mod:`.embedding` (Algorithms 1, 2),
  :mod:`.attention` (3–5), :mod:`.normalization` (6), :mod:`.unembedding` (7), :mod:`.feedforward` (the MLP),
  :mod:`.architectures` (8–10), :mod:`.kv_cache` (5 and 10 with a key/value cache), :mod:`.training` (11–13:
  losses, the SGD step, minibatches, AdamW), :mod:`.inference` (14, 15), :mod:`.recurrent`, :mod:`.seq2seq`,
  :mod:`.captioning` (Show, Attend and Tell), :mod:`.hierarchical` (HAN), :mod:`.pooling`,
  :mod:`.convolution`, :mod:`.vision` (Swin), :mod:`.graph_attention` (GAT, GATv2); batch-first, on ``cuda``
  when available, in float64, float32 or bfloat16 (:mod:`.device`).
- :mod:`.rotary` — rotary position embeddings (the ``rope`` options), which the attention modules apply to queries
  and keys.
- :mod:`.message_passing` — attention along a pattern's edges (:mod:`formal.graphs.message_passing`'s).
- :mod:`.paged` (PagedAttention: a block table over a pool of blocks, then Algorithm 5 with a cache) and
  :mod:`.paged_kernel` (its kernel, as a serving engine calls it).
- :mod:`.convert` moves arrays and parameters between the spec's world and this one, both ways;
  :mod:`.execute` runs any spec algorithm here with the spec's arguments, through the runner its module marks
  (:mod:`.runners`).
- :mod:`.third_party` reads torch's and HF transformers' modules into the spec's names.
- :mod:`.hf_configs` reads an HF config as the preset it is (algorithm, options, sizes); the HF readers take
  their options from it.
"""
