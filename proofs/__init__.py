"""Machine-checked theorems about the formal algorithms (to come: identities such as the equality of
grouped-query attention with n_kv_heads = H and Algorithm 5, checked symbolically with sympy)."""
