"""Writing a drawing as SVG without graphviz: box sizes from monospace text, a layered layout, plain SVG.

Monospace text is what makes this possible without a font library: every character is about 0.6 em
wide, so a label's box can be sized from its longest line.
"""

from xml.sax.saxutils import escape, quoteattr

from ._layout import layered_layout

__all__ = ["FILL", "FREED", "HOOKED", "render_svg", "box_size"]

FONT_SIZE = 12.0
CHAR_WIDTH = 0.6 * FONT_SIZE  # the advance of DejaVu Sans Mono / Courier / Menlo
LINE_HEIGHT = 1.3 * FONT_SIZE
PAD_X, PAD_Y = 8.0, 5.0

# torchviz's palette, so the pictures read the same: ops grey, leaves (parameters) blue, outputs green.
FILL = {"op": "#d3d3d3", "leaf": "#add8e6", "output": "#caff70"}
# A node whose saved values are gone (after backward) is drawn dashed and greyed out.
FREED = {"fill": "#f4f4f4", "stroke": "#9a9a9a", "text": "#8a8a8a"}
EDGE_COLOR = "#555555"
# A leaf whose gradient a hook sends on (DistributedDataParallel's all_reduce) gets this outline.
HOOKED = "#d2691e"


def box_size(lines):
    return (max(map(len, lines)) * CHAR_WIDTH + 2 * PAD_X, len(lines) * LINE_HEIGHT + 2 * PAD_Y)


def render_svg(nodes, edges):
    """SVG text for node records (``id``, ``label``, ``kind``, ``freed``) and (src_id, dst_id) edges."""
    layout = layered_layout({n.id: box_size(n.label.split("\n")) for n in nodes}, edges)
    w, h = layout.width, layout.height
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        f'font-size="{FONT_SIZE:g}">',
        '<defs><marker id="glasstorch-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        f'markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{EDGE_COLOR}"/></marker></defs>',
        f'<rect width="100%" height="100%" fill="white"/>',
    ]
    for (src, dst), points in zip(edges, layout.routes):
        out.append(f'<g class="edge"><title>{escape(src)} -&gt; {escape(dst)}</title>'
                   f'<path d="{_curve(points)}" fill="none" stroke="{EDGE_COLOR}" stroke-width="1.2" '
                   'marker-end="url(#glasstorch-arrow)"/></g>')
    for node in nodes:
        out.append(_node(node, layout.centers[node.id]))
    out.append("</svg>")
    return "\n".join(out)


def _curve(points):
    """A smooth path through the points, leaving and entering each one vertically (so arrows point down)."""
    (x, y), parts = points[0], [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for nx, ny in points[1:]:
        mid = (y + ny) / 2
        parts.append(f"C{x:.1f},{mid:.1f} {nx:.1f},{mid:.1f} {nx:.1f},{ny:.1f}")
        x, y = nx, ny
    return " ".join(parts)


def _node(node, center):
    lines = node.label.split("\n")
    width, height = box_size(lines)
    left, top = center[0] - width / 2, center[1] - height / 2
    if node.freed:
        fill, stroke, text, dash = FREED["fill"], FREED["stroke"], FREED["text"], ' stroke-dasharray="4 3"'
    else:
        fill, stroke, text, dash = FILL[node.kind], "#333333", "#000000", ""
        if getattr(node, "hooks", ()):
            stroke, dash = HOOKED, ' stroke-width="2"'
    parts = [f'<g class="node {node.kind}{" freed" if node.freed else ""}" id={quoteattr(node.id)}>',
             f"<title>{escape(node.name)}</title>",
             f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height:.1f}" rx="3" '
             f'fill="{fill}" stroke="{stroke}"{dash}/>']
    baseline = top + PAD_Y + (LINE_HEIGHT - FONT_SIZE) / 2 + 0.8 * FONT_SIZE
    for i, line in enumerate(lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        parts.append(f'<text x="{left + PAD_X:.1f}" y="{baseline + i * LINE_HEIGHT:.1f}" fill="{text}"'
                     f'{weight} xml:space="preserve">{escape(line)}</text>')
    parts.append("</g>")
    return "".join(parts)
