"""Server-rendered SVG charts: pure functions of numbers, markup built with format_html (every text
escaped), no inline style attributes (CSP style-src 'self'): SVG presentation attributes and classes."""

from django.utils.html import format_html, format_html_join


def _join(parts):
    """Concatenate fragments that are already safe (built by format_html)."""
    return format_html_join("", "{}", ((p,) for p in parts))


def _f(x):
    return f"{x:.1f}"


def _scale(lo, hi, a, b):
    return lambda v: a + (v - lo) / (hi - lo) * (b - a) if hi > lo else a


def _short(label, n=56):
    return label if len(label) <= n else label[: n - 1] + "…"


def forest_chart(rows, title):
    """rows: [{"label", "value", "ci": [lo, hi] | None}] on a 0..1 axis, one horizontal line each."""
    rows = [r for r in rows if r.get("value") is not None]
    if not rows:
        return ""
    width, left, right, row_h, top = 800, 340, 20, 24, 10
    height = top + row_h * len(rows) + 30
    x = _scale(0.0, 1.0, left, width - right)
    grid = format_html_join(
        "",
        '<line class="grid" x1="{0}" x2="{0}" y1="{1}" y2="{2}"/><text x="{0}" y="{3}" text-anchor="middle">{4}</text>',
        ((_f(x(t)), top, _f(height - 24), _f(height - 8), f"{t:.2f}") for t in (0, 0.25, 0.5, 0.75, 1)),
    )
    marks = []
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        lo, hi = r["ci"] or (r["value"], r["value"])
        marks.append(
            format_html(
                '<g class="row"><text x="{}" y="{}" text-anchor="end">{}</text>'
                '<line class="ci" x1="{}" x2="{}" y1="{y}" y2="{y}"/><circle class="pt" cx="{}" cy="{y}" r="4">'
                "<title>{}: {} (95% CI {})</title></circle></g>",
                left - 8,
                _f(y + 4),
                _short(r["label"]),
                _f(x(lo)),
                _f(x(hi)),
                _f(x(r["value"])),
                r["label"],
                f"{r['value']:.3f}",
                f"{lo:.3f} to {hi:.3f}" if r["ci"] else "not computable",
                y=_f(y),
            )
        )
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}">'
        "<title>{}</title>{}{}</svg>",
        title,
        width,
        height,
        width,
        height,
        title,
        grid,
        _join(marks),
    )


def trend_chart(points, title="Population-weighted fail rate by audit, Korn-Graubard 95% CIs"):
    """points: the report's trend points (name, current, plot{value, ci, hollow}, change{regression}).
    A provisional audit is drawn hollow, at the middle of its range (open disputes pass / fail)."""
    pts = [p for p in points if p["plot"]["value"] is not None]
    if not pts:
        return ""
    width, height, left, bottom, top = 640, 240, 44, 46, 12
    top_ci = max((p["plot"]["ci"] or [0, p["plot"]["value"]])[1] for p in pts)
    y_max = next(m for m in (0.1, 0.2, 0.4, 0.6, 0.8, 1.0) if m >= min(top_ci, 1.0))  # round tick values
    step = (width - left - 20) / max(len(pts), 1)
    y = _scale(0.0, y_max, height - bottom, top)
    axis = format_html_join(
        "",
        '<line class="grid" x1="{0}" x2="{1}" y1="{2}" y2="{2}"/><text x="{3}" y="{4}" text-anchor="end">{5}</text>',
        ((left, width - 10, _f(y(t)), left - 4, _f(y(t) + 4), f"{t:.2f}") for t in [y_max * k / 4 for k in range(5)]),
    )
    marks, line = [], []
    for i, p in enumerate(pts):
        cx = left + step * (i + 0.5)
        fr = p["plot"]
        lo, hi = fr["ci"] or (fr["value"], fr["value"])
        cls = (
            "pt"
            + (" current" if p.get("current") else "")
            + (" provisional" if fr["hollow"] else "")
            + (" regression" if (p.get("change") or {}).get("regression") else "")
        )
        what = (
            f"{p['provisional']['label']}, between {fr['low']:.3f} and {fr['high']:.3f}"
            if fr["hollow"]
            else f"population-weighted {fr['value']:.3f}"
        )
        line.append(f"{_f(cx)},{_f(y(fr['value']))}")
        marks.append(
            format_html(
                '<g><line class="ci" x1="{cx}" x2="{cx}" y1="{}" y2="{}"/><circle class="{}" cx="{cx}" cy="{}" r="4">'
                "<title>{}: {} ({}); sample rate {} of {} answers</title></circle>"
                '<text x="{cx}" y="{}" text-anchor="middle">{}</text></g>',
                _f(y(lo)),
                _f(y(hi)),
                cls,
                _f(y(fr["value"])),
                p["name"],
                what,
                f"95% CI {lo:.3f} to {hi:.3f}" if fr["ci"] else "CI not computable",
                p["fails"],
                p["n"],
                height - bottom + 16,
                _short(p["name"], max(10, int(step / 6.5))),
                cx=_f(cx),
            )
        )
    path = format_html('<polyline class="trend" fill="none" points="{}"/>', " ".join(line))
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}">'
        "<title>{}</title>{}{}{}</svg>",
        title,
        width,
        height,
        width,
        height,
        title,
        axis,
        path,
        _join(marks),
    )
