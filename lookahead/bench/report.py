"""Shared output for benchmarks: progress bars, a readable table, one JSON line, an optional PNG."""
import json
import sys


def progress(it, desc="", total=None):
    try:
        from tqdm import tqdm
    except ImportError:
        return it
    return tqdm(it, desc=desc, total=total, leave=False, file=sys.stderr, disable=not sys.stderr.isatty())


def table(rows, cols, title=None):
    """Formats dict rows as an aligned text table; floats with 2 decimals (4 significant when small, so a ratio
    of 0.7998 does not print as 0.8)."""
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.2f}" if abs(v) >= 1 or v == 0 else f"{v:.4g}"
        return str(v)

    cells = [[fmt(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) if cells else len(c) for i, c in enumerate(cols)]
    lines = []
    if title:
        lines.append(title)
    lines.append("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    lines.append("  ".join("-" * w for w in widths))
    for x in cells:
        lines.append("  ".join(v.ljust(w) for v, w in zip(x, widths)))
    return "\n".join(lines)


def json_line(obj):
    return json.dumps(obj, separators=(",", ":"), default=float)
