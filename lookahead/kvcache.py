"""Keeping a HF DynamicCache consistent with what verification accepted.

Each row b keeps its valid entries at [0, length_b) of the time axis; entries past that are stale and
masked. After a forward appended m entries at [T, T + m), row b keeps the root's entry and those of its
accepted path and moves them to [length_b, length_b + 1 + a_b); the time axis is then cut to the longest row.
"""
import torch


def _layers(cache):
    layers = getattr(cache, "layers", None)
    if layers is None:
        raise TypeError("lookahead needs a transformers Cache with .layers (transformers >= 4.56)")
    return layers


def cache_len(cache):
    layers = _layers(cache)
    if not layers or getattr(layers[0], "keys", None) is None or layers[0].keys.numel() == 0:
        return 0
    return layers[0].keys.shape[-2]


def compact(cache, T, keep, lengths):
    """keep: list per row of indices into the new block [T, T + m) to retain, in order; lengths: valid
    length per row before the step. Returns the new lengths."""
    B = len(keep)
    k_max = max(len(k) for k in keep)
    dev = _layers(cache)[0].keys.device
    src = torch.full((B, k_max), T, dtype=torch.long)
    dst = torch.empty((B, k_max), dtype=torch.long)
    new_len = []
    for b, k in enumerate(keep):
        L = int(lengths[b])
        src[b, :len(k)] = T + torch.as_tensor(k, dtype=torch.long)
        # padding slots land just after the row's new valid part (in bounds, and masked from then on)
        dst[b] = L + torch.arange(k_max)
        new_len.append(L + len(k))
    new_T = max(max(new_len), int(dst.max()) + 1)
    src, dst = src.to(dev), dst.to(dev)
    rows = torch.arange(B, device=dev).unsqueeze(1)
    for layer in _layers(cache):
        for name in ("keys", "values"):
            t = getattr(layer, name)  # [B, H, T + m, D]
            moved = t[rows, :, src]  # [B, k_max, H, D] (a copy, so overlapping moves are safe)
            t[rows, :, dst] = moved
            setattr(layer, name, t[:, :, :new_T])
    return new_len


def select_rows(cache, rows):
    """Drops finished rows from the batch dimension (rows: LongTensor of rows to keep)."""
    for layer in _layers(cache):
        for name in ("keys", "values"):
            t = getattr(layer, name)
            if t is not None and t.numel():
                setattr(layer, name, t.index_select(0, rows.to(t.device)))
