"""The torch reference implementation of the model stack (its modules need torch; :mod:`.runners` does not).

- :mod:`.layers` (Algorithms 1–7), :mod:`.stacks` (8–10), :mod:`.training` (11–13: losses, the SGD step,
  minibatches, AdamW), :mod:`.decoding` (14, 15, KV cache), :mod:`.recurrent`, :mod:`.seq2seq`,
  :mod:`.captioning`, :mod:`.pooling`, :mod:`.convolution`, :mod:`.vision` (Swin) and
  :mod:`.graph_attention` (attention along a pattern's edges), :mod:`.gat` (graph attention networks);
  batch-first, on ``cuda`` when available, in
  float64, float32 or bfloat16 (:mod:`.device`).
- :mod:`.paged` (PagedAttention: a block table over a pool of blocks, then Algorithm 5 with a cache).
- :mod:`.convert` moves arrays and parameters between the spec's world and this one, both ways;
  :mod:`.execute` runs any spec algorithm here with the spec's arguments, through the runner its module marks
  (:mod:`.runners`).
- :mod:`.third_party` reads torch's and HF transformers' modules into the spec's names.
- :mod:`.hf_configs` reads an HF config as the preset it is (algorithm, options, sizes); the HF readers take
  their options from it.
"""
