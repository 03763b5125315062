"""A small layered (Sugiyama-style) layout for drawing directed acyclic graphs without graphviz.

The classic recipe in four steps, each kept as plain as it can be:

1. **Layering** by longest path: a node sits one layer below the lowest of its parents, so every edge
   points downward. Roots (nodes nothing points to) are on layer 0.
2. **Dummy nodes**: an edge that spans several layers is cut into one-layer pieces through invisible
   points, so the next steps only ever deal with edges between neighbouring layers.
3. **Crossing reduction** by barycentres: sweep down and up, sorting each layer by the mean position of
   its neighbours in the layer just visited; keep the order with the fewest crossings seen.
4. **Coordinates**: each node wants to sit above/below the mean x of its neighbours; the nearest
   placement that keeps the layer's order and spacing is an isotonic regression, solved exactly by
   pool-adjacent-violators. A few down/up passes settle it.

Edges come back as polylines (start port on the source's bottom edge, dummy points, end port on the
target's top edge). Everything is plain Python; graphs of a few thousand nodes lay out in well under a second.
"""

from bisect import bisect_right, insort
from collections import defaultdict, namedtuple

__all__ = ["Layout", "layered_layout"]

_Dummy = namedtuple("_Dummy", "edge layer")  # an invisible point where a long edge crosses a layer


class Layout:
    """Result of :func:`layered_layout`: node centres, edge polylines and the canvas size."""

    def __init__(self, centers, routes, width, height, layers):
        self.centers = centers  # node id -> (x, y) centre of its box
        self.routes = routes    # one list of (x, y) points per input edge, same order
        self.width = width
        self.height = height
        self.layers = layers    # node id -> layer index (0 at the top)


def layered_layout(sizes, edges, *, gap_x=24.0, gap_y=36.0, margin=12.0, sweeps=12):
    """Lay out a DAG top-down.

    ``sizes`` maps node id -> (width, height) of its box, in drawing order (that order seeds the
    left-to-right order of each layer). ``edges`` is a list of (src, dst) pairs; repeats are kept and
    drawn side by side.
    """
    ids = list(sizes)
    layer = _longest_path_layers(ids, edges)

    # Cut every edge into unit-length segments through dummy points: chains[i] = [src, dummies..., dst].
    chains, size = [], dict(sizes)
    for i, (src, dst) in enumerate(edges):
        chain = [src]
        for depth in range(layer[src] + 1, layer[dst]):
            dummy = _Dummy(i, depth)
            layer[dummy], size[dummy] = depth, (2.0, 0.0)
            chain.append(dummy)
        chains.append(chain + [dst])

    rows = defaultdict(list)  # layer index -> vertices in left-to-right order
    for v in list(ids) + [v for chain in chains for v in chain[1:-1]]:
        rows[layer[v]].append(v)
    rows = [rows[k] for k in range(len(rows))]

    up, down = defaultdict(list), defaultdict(list)  # neighbours in the layer above / below
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)

    rows = _reduce_crossings(rows, up, down, sweeps)
    xs = _assign_x(rows, size, up, down, gap_x)

    # Stack the layers; each is a band as tall as its tallest box, and boxes are centred in it.
    shift = margin - min(xs[v] - size[v][0] / 2 for row in rows for v in row)
    centers, band, top = {}, {}, margin
    for row in rows:
        height = max(size[v][1] for v in row)
        for v in row:
            centers[v] = (xs[v] + shift, top + height / 2)
            band[v] = (top, top + height)
        top += height + gap_y
    width = max(centers[v][0] + size[v][0] / 2 for v in centers) + margin
    routes = _route(chains, centers, size, band)
    return Layout({v: centers[v] for v in ids}, routes, width, top - gap_y + margin,
                  {v: layer[v] for v in ids})


def _longest_path_layers(ids, edges):
    """layer[v] = 1 + max(layer of v's parents), computed in topological order (Kahn's algorithm)."""
    children, indegree = defaultdict(list), dict.fromkeys(ids, 0)
    for src, dst in edges:
        children[src].append(dst)
        indegree[dst] += 1
    layer = dict.fromkeys(ids, 0)
    ready = [v for v in ids if indegree[v] == 0]
    while ready:
        v = ready.pop()
        for c in children[v]:
            layer[c] = max(layer[c], layer[v] + 1)
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    if any(indegree.values()):
        raise ValueError("layered_layout: the graph has a cycle")
    return layer


def _reduce_crossings(rows, up, down, sweeps):
    best, best_crossings = [list(r) for r in rows], _count_all_crossings(rows, down)
    last_gain = 0
    for sweep in range(sweeps):
        if best_crossings == 0 or sweep - last_gain > 3:  # solved, or two down/up rounds gained nothing
            break
        downward = sweep % 2 == 0
        order = range(1, len(rows)) if downward else range(len(rows) - 2, -1, -1)
        for k in order:
            fixed = rows[k - 1] if downward else rows[k + 1]
            neighbours = up if downward else down
            pos = {v: i for i, v in enumerate(fixed)}
            rows[k] = sorted(rows[k], key=_barycentre_key(rows[k], neighbours, pos))
        crossings = _count_all_crossings(rows, down)
        if crossings < best_crossings:
            best, best_crossings, last_gain = [list(r) for r in rows], crossings, sweep
    return best


def _barycentre_key(row, neighbours, pos):
    # A node without neighbours in the fixed layer keeps its current slot (scaled to the same range).
    scale = max(len(pos) - 1, 1) / max(len(row) - 1, 1)
    current = {v: i * scale for i, v in enumerate(row)}

    def key(v):
        ps = [pos[u] for u in neighbours[v]]
        return sum(ps) / len(ps) if ps else current[v]
    return key


def _count_all_crossings(rows, down):
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        pos = {v: i for i, v in enumerate(lower)}
        # Two segments cross when their upper ends and lower ends are in opposite order: with the
        # segments sorted by upper end, count for each one the earlier segments whose lower end is
        # further right (segments sharing an end do not cross).
        seen = []
        for _, lower_end in sorted((i, pos[w]) for i, v in enumerate(upper) for w in down[v]):
            total += len(seen) - bisect_right(seen, lower_end)
            insort(seen, lower_end)
    return total


def _assign_x(rows, size, up, down, gap_x, passes=2):
    """Pull each node toward the mean x of its neighbours while keeping order and spacing.

    Passes alternate downward (toward the parents) and upward (toward the children); a last pass
    balances between both.
    """
    xs = {}
    for row in rows:  # start packed to the left
        x = 0.0
        for i, v in enumerate(row):
            if i:
                x += _spacing(size, row[i - 1], v, gap_x)
            xs[v] = x
    both = {v: up[v] + down[v] for row in rows for v in row}
    plan = [(rows[1:], up), (rows[-2::-1], down)] * passes + [(rows, both)]
    for sweep, neighbours in plan:
        for row in sweep:
            wanted = [sum(xs[u] for u in neighbours[v]) / len(neighbours[v]) if neighbours[v] else xs[v]
                      for v in row]
            weights = [2.0 if isinstance(v, _Dummy) else 1.0 for v in row]  # keep long edges straight
            for v, x in zip(row, _place_row(row, wanted, weights, size, gap_x)):
                xs[v] = x
    return xs


def _spacing(size, left, right, gap_x):
    return (size[left][0] + size[right][0]) / 2 + gap_x


def _place_row(row, wanted, weights, size, gap_x):
    """Closest positions (least squares) to `wanted` with x[i+1] - x[i] >= spacing, in order.

    Subtracting each node's packed offset turns the spacing constraints into "non-decreasing", which is
    isotonic regression: merge neighbouring blocks while they are out of order (pool adjacent violators).
    """
    offsets = [0.0]
    for a, b in zip(row, row[1:]):
        offsets.append(offsets[-1] + _spacing(size, a, b, gap_x))
    blocks = []  # [weighted mean, total weight, count]
    for target, w in zip((x - o for x, o in zip(wanted, offsets)), weights):
        blocks.append([target, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, weight, count = blocks.pop()
            prev = blocks[-1]
            prev[0] = (prev[0] * prev[1] + mean * weight) / (prev[1] + weight)
            prev[1] += weight
            prev[2] += count
    ys = [mean for mean, _, count in blocks for _ in range(count)]
    return [y + o for y, o in zip(ys, offsets)]


def _route(chains, centers, size, band):
    """Polylines from the source's bottom edge through the dummy points to the target's top edge.

    Edges run straight down while inside a layer's band (``band[v]`` = its top and bottom) and bend only
    in the gaps between layers, so they never cut through a box. A box with several edges leaving (or
    arriving) spreads their ends along its edge, ordered by where the other end lies, so repeated edges
    (``x * x``) are drawn side by side instead of on top of each other.
    """
    def spread(edge_ids, anchor, other_x):
        cx, _ = centers[anchor]
        span = min(size[anchor][0] * 0.6, 14.0 * (len(edge_ids) - 1))
        order = sorted(edge_ids, key=other_x)
        return {e: cx - span / 2 + span * k / max(len(order) - 1, 1) for k, e in enumerate(order)}

    leaving, arriving = defaultdict(list), defaultdict(list)
    for e, chain in enumerate(chains):
        leaving[chain[0]].append(e)
        arriving[chain[-1]].append(e)
    start_x, end_x = {}, {}
    for v, es in leaving.items():
        start_x.update(spread(es, v, lambda e: centers[chains[e][1]][0]))
    for v, es in arriving.items():
        end_x.update(spread(es, v, lambda e: centers[chains[e][-2]][0]))

    routes = []
    for e, chain in enumerate(chains):
        src, dst = chain[0], chain[-1]
        points = [(start_x[e], centers[src][1] + size[src][1] / 2), (start_x[e], band[src][1])]
        points += [(centers[v][0], y) for v in chain[1:-1] for y in band[v]]
        points += [(end_x[e], band[dst][0]), (end_x[e], centers[dst][1] - size[dst][1] / 2)]
        # A box as tall as its band gives a zero-length piece (up to rounding); drop it.
        routes.append([p for i, p in enumerate(points)
                       if i == 0 or abs(p[0] - points[i - 1][0]) + abs(p[1] - points[i - 1][1]) > 1e-6])
    return routes
