"""Loop-based verifier that reads like the math (slow; the yardstick for the fast paths).

For request b with draft nodes 0..n-1 (parents[i] < i, -1 = child of the root), row `base` of its logits
is the root and row base + 1 + i is node i. Starting at the root, repeat: draw x from the target
distribution of the current node's row; if a child of the node carries token x (the first such child, when
siblings repeat a token), accept it and move there; otherwise stop and emit x as the next token.

Why this is lossless: the emitted tokens are exactly a sample of the target, token by token, along the path
the draft happens to contain; the draft only decides how far one forward pass gets. At a node with child
tokens C the acceptance probability is p(C), the most any verifier of a fixed token tree can reach; for a
chain it equals the usual accept-with-p(x), resample-from-(p - x) rule.
"""
import torch


def verify_reference(logits, draft_tokens, parents, offsets, temperature, noise):
    """logits [R, V] (already masked by top-k/top-p); draft_tokens, parents int64 [N]; offsets int64 [B+1];
    temperature float [B] (0 = greedy); noise float32 [R, V] Gumbel noise or None (all greedy).

    Returns (accepted node lists, next tokens) as Python lists."""
    B = offsets.numel() - 1
    for r in range(logits.shape[0]):  # every row must be a distribution, visited or not (as in the fast paths)
        row = logits[r]
        if bool(torch.isnan(row).any() or torch.isposinf(row).any() or torch.isneginf(row).all()):
            raise ValueError(f"logits row {r} holds NaN or +inf, or only -inf")
    paths, nexts = [], []
    for b in range(B):
        lo, hi = int(offsets[b]), int(offsets[b + 1])
        base = lo + b
        toks = [int(t) for t in draft_tokens[lo:hi]]
        pars = [int(p) for p in parents[lo:hi]]
        T = float(temperature[b])
        node, path = -1, []
        while True:
            row = base + 1 + node
            x = _draw(logits[row], T, None if noise is None else noise[row])
            child = next((j for j in range(len(toks)) if pars[j] == node and toks[j] == x), None)
            if child is None:
                nexts.append(x)
                break
            path.append(child)
            node = child
        paths.append(path)
    return paths, nexts


def _draw(row, T, noise):
    best, best_i = None, -1
    for i in range(row.numel()):
        v = row[i].to(torch.float32)
        if T != 0.0:
            v = v / torch.tensor(T, dtype=torch.float32) + noise[i]
        if best is None or v > best:  # strict: ties keep the lower id
            best, best_i = v, i
    return best_i
