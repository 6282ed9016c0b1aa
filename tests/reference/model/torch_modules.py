"""Helpers for the torch modules of other libraries (torch.nn, HF transformers, PyTorch Geometric) the
reference is compared against."""


def randomise(module, seed):
    """A torch module with every parameter ~ N(0, 0.5²), in float64, in eval mode: libraries initialise biases
    to 0 and norms to 1, which would hide a misplaced bias or γ."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module.double().eval()
