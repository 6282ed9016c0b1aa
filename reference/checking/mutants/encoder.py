"""Algorithm 9, the encoder-only transformer: BERT (masked-LM head) and ViT (patches or the image itself,
classifier head)."""

from __future__ import annotations

import numpy as np

from .blocks import Stack
from .numerics import affine, gelu, softmax

__all__ = ["etransformer", "image_patches"]


def image_patches(image, P, order, *, _row_major=True):
    """A channel-last image (P·n_h)×(P·n_w)×C as its patches, one column of P²·C values per patch, patch by
    patch row-major (``_row_major=False``: column-major); a patch's values in (c, i, j) order
    (``channel-first``) or (i, j, c) (``channel-last``)."""
    rows, cols, _ = image.shape
    corners = [(r, c) for r in range(0, rows, P) for c in range(0, cols, P)]
    if not _row_major:
        corners.sort(key=lambda rc: (rc[1], rc[0]))
    blocks = [image[r:r + P, c:c + P, :] for r, c in corners]                  # each P×P×C
    return np.stack([b.transpose(2, 0, 1).ravel() if order == "channel-first" else b.ravel() for b in blocks],
                    axis=1)


def _tokens(stack, p, x, s, ell_max):
    """``X[:, t] ← W_e[:, x[t]] + W_p[:, t] (+ W_s[:, s[t]])``: BERT adds token-type (segment) embeddings."""
    X = stack.embed(p, x, ell_max)
    return X if s is None else X + p["W_s"][:, s]


def _patches(stack, p, X_p, _class_token):
    """ViT: ``X ← [x_class, W_patch X_p + b_patch 1ᵀ] + W_p``: d_e×(ℓ + 1), the class token first."""
    patches = affine(p["W_patch"], X_p, p.get("b_patch") if stack.bias else None)    # d_e×ℓ
    return _class_token(p["x_class"], patches) + p["W_p"]


def _mlm(stack, p, X, unembedding_bias, activation):
    """The masked-LM head, Algorithm 9's last three lines: ``X ← GELU(W_f X + b_f 1ᵀ)``, ``LN(X | γ, β)``,
    ``P ← softmax(W_u X)`` (N_V×ℓ); its GELU is the exact one whatever the layers' activation."""
    if stack.norm_position == "pre":
        X = stack.layer_norm(p, "", X)                                         # the final layer norm
    X = activation(affine(p["W_f"], X, p.get("b_f") if stack.bias else None))
    X = stack.layer_norm(p, "_f", X)
    return stack.unembed(p, X, p["b_u"] if unembedding_bias else None)


def _classifier(stack, p, X, _class_column):
    """ViT's head: ``p ← softmax(W_head LN(X)[:, class] + b_head)`` over the classes."""
    X = stack.layer_norm(p, "", X)
    return softmax(affine(p["W_head"], X[:, _class_column], p.get("b_head") if stack.bias else None))


def etransformer(*, token_types=False, embedding_norm=False, unembedding_bias=False, inputs="tokens",
                 head="mlm", norm_position="post", patch_order=None,
                 _class_token=lambda x_class, patches: np.concatenate([x_class, patches], axis=1),
                 _class_column=0, _head_activation=gelu, _patches_of=image_patches, **options):
    """Algorithm 9: ``P ← ETransformer(x | θ)``, column t the distribution of the token at t (BERT), or
    ViT's ``p`` over the classes (from patches X_p, or the image X_img cut into patches of side P, read
    from W_patch's P²·C columns).  Post-LN, GELU, Mask ≡ 1; W_u is N_V×d_f (design decision 1)."""
    stack = Stack(norm_position=norm_position, **options)

    def etransformer(params, x=None, s=None, X_p=None, X_img=None, ell_max=None):
        p = params
        if inputs == "image":
            P = int(round((p["W_patch"].shape[1] / X_img.shape[2]) ** 0.5))
            X_p = _patches_of(X_img, P, patch_order)
        if inputs == "tokens":
            X = _tokens(stack, p, x, s if token_types else None, ell_max)       # d_e×ℓ
        else:
            X = _patches(stack, p, X_p, _class_token)                            # d_e×(ℓ + 1)
        if embedding_norm:
            X = stack.layer_norm(p, "_e", X)
        mask = np.ones((X.shape[1], X.shape[1]))                                # every token sees every token
        for l in range(len(p["W_q"])):
            X = stack.sublayer(p, "1", l, X, lambda Y: stack.attention(p, "", l, Y, Y, mask))
            X = stack.sublayer(p, "2", l, X, lambda Y: stack.mlp(p, "", l, Y))
        if head == "mlm":
            return _mlm(stack, p, X, unembedding_bias, _head_activation)
        return _classifier(stack, p, X, _class_column)
    return etransformer
