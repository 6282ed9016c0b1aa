"""A module that exits while it is imported (a script's `sys.exit(main())` left at the top level)."""
import sys

sys.exit(0)


def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    return X
