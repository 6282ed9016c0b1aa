"""The published configurations the presets are checked against, written out as data (the hub is offline).

``HF`` holds, for each preset with an HF counterpart, the HF config class and the fields of the checkpoint's
published ``config.json`` that say what the model is (dropout rates, initialisers and token ids left out: they
change no forward pass at inference and no size); a field the file leaves out takes the class default, as HF
loads it.  HF's config classes write into a ``rope_scaling`` dict they are given (``rope_theta`` …): build a
config from a deep copy (:func:`fields_of`), never from these dicts.  ``GPT3`` and ``TRANSFORMER_BASE`` are the
papers' tables, for the presets without an HF model.
"""

_GPT2 = {"activation_function": "gelu_new", "layer_norm_epsilon": 1e-05, "n_ctx": 1024, "n_positions": 1024,
         "vocab_size": 50257}
_BERT = {"hidden_act": "gelu", "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "type_vocab_size": 2,
         "vocab_size": 30522, "position_embedding_type": "absolute"}
_VIT = {"hidden_act": "gelu", "layer_norm_eps": 1e-12, "image_size": 224, "num_channels": 3, "qkv_bias": True}
#: The fields every Llama 3.1 and 3.2 config.json shares: grouped-query attention with 8 key/value heads, the
#: 128256-token vocabulary, a 131072-token context reached by the llama3 rule from 8192 (its factor per model).
_LLAMA3 = {"attention_bias": False, "hidden_act": "silu", "max_position_embeddings": 131072, "mlp_bias": False,
           "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "vocab_size": 128256}


def _llama3_scaling(factor):
    """The ``rope_scaling`` of a Llama 3.1 (factor 8) or 3.2 (factor 32) config.json."""
    return {"factor": factor, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192, "rope_type": "llama3"}


_SWIN = {"hidden_act": "gelu", "layer_norm_eps": 1e-05, "image_size": 224, "patch_size": 4, "num_channels": 3,
         "window_size": 7, "mlp_ratio": 4.0, "qkv_bias": True, "use_absolute_embeddings": False,
         "num_labels": 1000}

#: preset name ↦ (HF config class name, the checkpoint, its config.json's fields).
HF = {
    "gpt2": ("GPT2Config", "openai-community/gpt2", {**_GPT2, "n_embd": 768, "n_head": 12, "n_layer": 12}),
    "gpt2-medium": ("GPT2Config", "openai-community/gpt2-medium",
                    {**_GPT2, "n_embd": 1024, "n_head": 16, "n_layer": 24}),
    "gpt2-large": ("GPT2Config", "openai-community/gpt2-large",
                   {**_GPT2, "n_embd": 1280, "n_head": 20, "n_layer": 36}),
    "gpt2-xl": ("GPT2Config", "openai-community/gpt2-xl", {**_GPT2, "n_embd": 1600, "n_head": 25, "n_layer": 48}),
    "bert-base": ("BertConfig", "google-bert/bert-base-uncased",
                  {**_BERT, "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
                   "num_hidden_layers": 12}),
    "bert-large": ("BertConfig", "google-bert/bert-large-uncased",
                   {**_BERT, "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
                    "num_hidden_layers": 24}),
    "llama-2-7b": ("LlamaConfig", "meta-llama/Llama-2-7b-hf",
                   {"hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 11008,
                    "max_position_embeddings": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
                    "num_key_value_heads": 32, "rms_norm_eps": 1e-05, "rope_scaling": None,
                    "tie_word_embeddings": False, "vocab_size": 32000}),
    "llama-3.1-8b": ("LlamaConfig", "meta-llama/Llama-3.1-8B",
                     {**_LLAMA3, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
                      "num_hidden_layers": 32, "rope_scaling": _llama3_scaling(8.0), "tie_word_embeddings": False}),
    "llama-3.1-70b": ("LlamaConfig", "meta-llama/Llama-3.1-70B",
                      {**_LLAMA3, "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
                       "num_hidden_layers": 80, "rope_scaling": _llama3_scaling(8.0), "tie_word_embeddings": False}),
    "llama-3.1-405b": ("LlamaConfig", "meta-llama/Llama-3.1-405B",
                       {**_LLAMA3, "hidden_size": 16384, "intermediate_size": 53248, "num_attention_heads": 128,
                        "num_hidden_layers": 126, "rope_scaling": _llama3_scaling(8.0),
                        "tie_word_embeddings": False}),
    "llama-3.2-1b": ("LlamaConfig", "meta-llama/Llama-3.2-1B",
                     {**_LLAMA3, "head_dim": 64, "hidden_size": 2048, "intermediate_size": 8192,
                      "num_attention_heads": 32, "num_hidden_layers": 16, "rope_scaling": _llama3_scaling(32.0),
                      "tie_word_embeddings": True}),
    "llama-3.2-3b": ("LlamaConfig", "meta-llama/Llama-3.2-3B",
                     {**_LLAMA3, "head_dim": 128, "hidden_size": 3072, "intermediate_size": 8192,
                      "num_attention_heads": 24, "num_hidden_layers": 28, "rope_scaling": _llama3_scaling(32.0),
                      "tie_word_embeddings": True}),
    "vit-b16": ("ViTConfig", "google/vit-base-patch16-224",
                {**_VIT, "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
                 "num_hidden_layers": 12, "patch_size": 16, "num_labels": 1000}),
    "vit-l16": ("ViTConfig", "google/vit-large-patch16-224",
                {**_VIT, "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
                 "num_hidden_layers": 24, "patch_size": 16, "num_labels": 1000}),
    # Google published ViT-H/14 on HF only as the ImageNet-21k checkpoint, without a classifier: its 1000
    # ImageNet classes are the paper's fine-tuning head (Dosovitskiy et al. 2021, Table 2), added here.
    "vit-h14": ("ViTConfig", "google/vit-huge-patch14-224-in21k",
                {**_VIT, "hidden_size": 1280, "intermediate_size": 5120, "num_attention_heads": 16,
                 "num_hidden_layers": 32, "patch_size": 14, "num_labels": 1000}),
    "swin-t": ("SwinConfig", "microsoft/swin-tiny-patch4-window7-224",
               {**_SWIN, "embed_dim": 96, "depths": [2, 2, 6, 2], "num_heads": [3, 6, 12, 24]}),
    "swin-s": ("SwinConfig", "microsoft/swin-small-patch4-window7-224",
               {**_SWIN, "embed_dim": 96, "depths": [2, 2, 18, 2], "num_heads": [3, 6, 12, 24]}),
    "swin-b": ("SwinConfig", "microsoft/swin-base-patch4-window7-224",
               {**_SWIN, "embed_dim": 128, "depths": [2, 2, 18, 2], "num_heads": [4, 8, 16, 32]}),
    "swin-l": ("SwinConfig", "microsoft/swin-large-patch4-window7-224",
               {**_SWIN, "embed_dim": 192, "depths": [2, 2, 18, 2], "num_heads": [6, 12, 24, 48]}),
}

#: The presets whose published config is its HF class's defaults but for the fields named (a second,
#: independent transcription): an image classifier's class defaults to 2 labels, and LlamaConfig's defaults
#: are Llama 1's context of 2048 and RMSNorm ε of 1e-6.
CLASS_DEFAULTS = {"gpt2": (), "bert-base": (), "vit-b16": ("num_labels",), "swin-t": ("num_labels",),
                  "llama-2-7b": ("max_position_embeddings", "rms_norm_eps")}

#: Brown et al. 2020, Table 2.1: name ↦ (n_layers, d_model, n_heads, d_head); n_ctx = 2048 for all, the
#: feed-forward layer 4·d_model wide (§2.1), GPT-2's byte-level BPE of 50257 tokens.
GPT3 = {"gpt3-125m": (12, 768, 12, 64), "gpt3-350m": (24, 1024, 16, 64), "gpt3-760m": (24, 1536, 16, 96),
        "gpt3-1.3b": (24, 2048, 24, 128), "gpt3-2.7b": (32, 2560, 32, 80), "gpt3-6.7b": (32, 4096, 32, 128),
        "gpt3-13b": (40, 5140, 40, 128), "gpt3-175b": (96, 12288, 96, 128)}
GPT3_CONTEXT, GPT3_VOCABULARY = 2048, 50257

#: Vaswani et al. 2017, Table 3's base row and §3: N = 6 layers per stack, d_model = 512, d_ff = 2048,
#: h = 8, d_k = d_v = 64; a shared source–target vocabulary of about 37000 tokens (§5.1).
TRANSFORMER_BASE = {"N": 6, "d_model": 512, "d_ff": 2048, "h": 8, "d_k": 64, "d_v": 64, "vocabulary": 37000}


def fields_of(name: str) -> dict:
    """A deep copy of preset ``name``'s published fields, for a config class to read (and write into)."""
    import copy
    return copy.deepcopy(HF[name][2])
