"""Sampling an image at arbitrary points: F.grid_sample and F.affine_grid (torch's ``GridSampler.cpp``,
``GridSampler.h`` and ``AffineGridGenerator.cpp``).

``grid_sample(input, grid)`` reads ``input`` (N, C, H, W) -- or (N, C, D, H, W) -- at the points of
``grid`` (N, H_out, W_out, 2), given in [-1, 1] with x first (x runs along W, y along H, z along D):

1. *unnormalize*: x in [-1, 1] -> a pixel coordinate, either onto the centres of the corner pixels
   (``align_corners=True``: (x + 1) / 2 * (W - 1)) or onto their outer edges ((x + 1) W / 2 - 1/2);
2. *pad*: ``zeros`` reads 0 outside the image; ``border`` clamps the coordinate into it; ``reflection``
   mirrors it at the border (about the corner centres or edges, as align_corners says), then clamps;
3. *interpolate*: ``bilinear`` (trilinear in 3-D) weighs the 2^d neighbours by their distances,
   ``nearest`` takes the closest (ties to even, as ``nearbyint``); ``bicubic`` (2-D only) weighs the
   4 x 4 neighbours by Keys' cubic convolution (a = -0.75), padding each neighbour's position instead
   of the point's (torch's ``get_value_bounded``), so its grid gradient has no clamp factor.

The derivative (torch's ``grid_sampler_2d_backward``): for the input, each output's gradient added to
the neighbours it was read from, with their weights; for the grid, the weights' derivatives times the
neighbours' values, times the coordinate's derivative through steps 1-2 (the unnormalize scale, 0 where
a clamp bit, -1 where a reflection flipped). ``nearest`` gives the grid no gradient.

``affine_grid(theta, size)`` is the grid of an affine map: the base grid of pixel positions (in
[-1, 1], homogeneous) times theta^T, one bmm; its derivative is the base grid^T times the gradient.

Double backward (``grid_sampler_2d_backward``'s own derivative, GridSampler2DBackwardBackward0):
the backward is linear in its incoming gradient g, and reads the weights w(coordinate) and their
first derivatives w'. With ggI, ggG the gradients flowing into its two results:

* g:     ggI sampled at the points (the forward on ggI) + input read at them times w' . ggG;
* input: g times w' . ggG, added onto the neighbours (the grid gradient's adjoint);
* grid:  g . ggI read at the neighbours times w', plus input . g times the weights' second derivatives
  w'' . ggG (bilinear: only the mixed ones; bicubic: all), each times the coordinate's derivative.

``nearest`` has no grid gradient, so only its first term. The three come from one kernel
(``_grid_sampler_{2,3}d_double_backward``, glasstorch's own op: torch computes the same in C++); a
third derivative raises, naming it.
"""
import itertools

from .. import _warnings
from .._array import (xp, arange_like as _arange_like, on_device_of as _on_device_of, full_like as _full_like,
                      zeros_like as _zeros_like)
from .._ops import defop, aten, node_classes_of
from .._seam import overridable

__getattr__ = node_classes_of(__name__)    # (the node classes declared here, by name: TanhBackward0)

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


# ---- source coordinates ---------------------------------------------------------------------------------
def _reflect(coord, twice_low, twice_high):
    """torch's ``reflect_coordinates_set_grad``: coord mirrored into [low, high], and d(result)/d(coord)."""
    if twice_low == twice_high:
        return xp.zeros_like(coord), xp.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = coord - low
    sign = xp.where(shifted < 0, -1, 1)
    shifted = xp.abs(shifted)
    extra = xp.fmod(shifted, span)
    flips = xp.floor(shifted / span)
    even = flips % 2 == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, sign, -sign)


def _clip(coord, size):
    """torch's ``clip_coordinates_set_grad``: coord clamped into [0, size - 1]; its derivative is 0 at
    and beyond the ends."""
    inside = (coord > 0) & (coord < size - 1)
    return xp.clip(coord, 0, size - 1), inside.astype(coord.dtype)


def _source_index(coord, size, padding_mode, align_corners):
    """Pixel coordinates of the normalized ``coord`` along an axis of ``size`` pixels, and their derivative
    with respect to ``coord`` (torch's ``grid_sampler_compute_source_index_set_grad``)."""
    scale = (size - 1) / 2 if align_corners else size / 2
    x = ((coord + 1) * (size - 1) / 2) if align_corners else (((coord + 1) * size - 1) / 2)
    grad = xp.full_like(coord, scale)
    if padding_mode == 1:
        x, g = _clip(x, size)
        grad = grad * g
    elif padding_mode == 2:
        x, g = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x, g2 = _clip(x, size)
        grad = grad * g * g2
    return x, grad


def _sample_points(input, grid, interpolation_mode, padding_mode, align_corners):
    """For each output point: the flat indices of the neighbours it reads, their weights (0 outside the
    image) and what the grid gradient needs. Spatial axes in input order (D,) H, W; grid's last dim is
    x, y(, z): reversed."""
    spatial = input.shape[2:]
    nd = len(spatial)
    n, out = grid.shape[0], grid.shape[1:-1]
    coords, coord_grads = [], []
    for axis, size in enumerate(spatial):
        c, g = _source_index(grid[..., nd - 1 - axis].reshape(n, -1), size, padding_mode, align_corners)
        coords.append(c)
        coord_grads.append(g)
    strides = [1] * nd
    for axis in range(nd - 2, -1, -1):
        strides[axis] = strides[axis + 1] * spatial[axis + 1]
    corners = []
    if interpolation_mode == 1:     # nearest
        idx = [xp.rint(c) for c in coords]
        corners.append((idx, xp.ones_like(coords[0]), None))
    else:
        base = [xp.floor(c) for c in coords]
        frac = [c - b for c, b in zip(coords, base)]
        for offsets in itertools.product((0, 1), repeat=nd):
            idx = [b + o for b, o in zip(base, offsets)]
            factors = [f if o else 1 - f for f, o in zip(frac, offsets)]
            weight = factors[0]
            for f in factors[1:]:
                weight = weight * f
            # d weight / d coord[axis]: the other axes' factors, signed by the side of this corner
            dweights = []
            for axis in range(nd):
                d = xp.full_like(weight, 1.0 if offsets[axis] else -1.0)
                for other in range(nd):
                    if other != axis:
                        d = d * factors[other]
                dweights.append(d)
            corners.append((idx, weight, dweights))
    points = []
    for idx, weight, dweights in corners:
        valid = _full_like(idx[0], True, idx[0].shape, bool)
        for i, size in zip(idx, spatial):
            valid &= (i >= 0) & (i <= size - 1)
        flat = _zeros_like(idx[0], idx[0].shape, xp.int64)
        for i, stride in zip(idx, strides):
            flat = flat + xp.where(valid, i, 0).astype(xp.int64) * stride
        points.append((flat, weight * valid, dweights, valid))
    return points, coord_grads, out


_CUBIC_A = -0.75      # the cubic convolution's parameter (Keys), as torch's


def _cubic_coefficients(t):
    """torch's ``get_cubic_upsample_coefficients``: the weights of the 4 neighbours at offsets -1, 0, 1, 2."""
    a = _CUBIC_A
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a          # noqa: E731   1 < |x| < 2
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1               # noqa: E731   |x| <= 1
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_coefficients_grad(t):
    """torch's ``get_cubic_coefficients_grad`` (its sign convention: the grid gradient subtracts them)."""
    a = _CUBIC_A
    x0, x1, x2, x3 = -1 - t, -t, 1 - t, 2 - t
    return [(-3 * a * x0 - 10 * a) * x0 - 8 * a, (-3 * (a + 2) * x1 - 2 * (a + 3)) * x1,
            (3 * (a + 2) * x2 - 2 * (a + 3)) * x2, (3 * a * x3 - 10 * a) * x3 + 8 * a]


def _bounded(coord, size, padding_mode, align_corners):
    """torch's ``get_value_bounded`` coordinates: an integer position padded as the mode says (its
    derivative is not used), then whether it lies in the image."""
    if padding_mode == 1:
        coord = _clip(coord, size)[0]
    elif padding_mode == 2:
        coord = _reflect(coord, 0, 2 * (size - 1))[0] if align_corners else _reflect(coord, -1, 2 * size - 1)[0]
        coord = _clip(coord, size)[0]
    index = xp.trunc(coord)
    return index, (index >= 0) & (index <= size - 1)


def _bicubic_points(input, grid, padding_mode, align_corners):
    """The 16 neighbours of each point (flat index, in-image mask) with their weights and the weights'
    derivatives along x and y; and d(pixel coordinate)/d(grid coordinate) per axis."""
    (height, width), n = input.shape[2:], grid.shape[0]
    gx, gy = grid[..., 0].reshape(n, -1), grid[..., 1].reshape(n, -1)
    ix = ((gx + 1) * (width - 1) / 2) if align_corners else (((gx + 1) * width - 1) / 2)
    iy = ((gy + 1) * (height - 1) / 2) if align_corners else (((gy + 1) * height - 1) / 2)
    scale_x = (width - 1) / 2 if align_corners else width / 2
    scale_y = (height - 1) / 2 if align_corners else height / 2
    x0, y0 = xp.floor(ix), xp.floor(iy)
    tx, ty = ix - x0, iy - y0
    cx, cy = _cubic_coefficients(tx), _cubic_coefficients(ty)
    dx, dy = _cubic_coefficients_grad(tx), _cubic_coefficients_grad(ty)
    points = []
    for j in range(4):
        row, row_ok = _bounded(y0 - 1 + j, height, padding_mode, align_corners)
        for i in range(4):
            col, col_ok = _bounded(x0 - 1 + i, width, padding_mode, align_corners)
            valid = row_ok & col_ok
            flat = (xp.where(valid, row, 0) * width + xp.where(valid, col, 0)).astype(xp.int64)
            points.append((flat, cx[i] * cy[j] * valid, (-dx[i] * cy[j], -dy[j] * cx[i]), valid))
    return points, (scale_x, scale_y)


def _gather(input, flat):
    """input[n, :, flat[n, p]] as (N, C, P)."""
    n, c = input.shape[:2]
    planes = input.reshape(n, c, -1)
    return xp.take_along_axis(planes, xp.broadcast_to(flat[:, None, :], (n, c, flat.shape[1])), axis=2)


def _legacy(dtype):
    from .. import _dtype
    return _dtype._BY_NUMPY[dtype]._legacy


def _check_sampler(input, grid, interpolation_mode, nd):
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_legacy(input.dtype)} but found {_legacy(grid.dtype)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    if input.ndim != nd + 2 or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if interpolation_mode == 2 and nd == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype.kind != "f":
        kernel_name = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{_legacy(input.dtype)}\'')


def _grid_sampler_kernel(nd):
    def kernel(input, grid, interpolation_mode, padding_mode, align_corners):
        _check_sampler(input, grid, interpolation_mode, nd)
        if interpolation_mode == 2:
            points, _ = _bicubic_points(input, grid, padding_mode, align_corners)
            out = grid.shape[1:-1]
        else:
            points, _, out = _sample_points(input, grid, interpolation_mode, padding_mode, align_corners)
        result = _zeros_like(input, input.shape[:2] + (points[0][0].shape[1],))
        for flat, weight, _, _ in points:
            result += _gather(input, flat) * weight[:, None, :].astype(input.dtype, copy=False)
        return result.reshape(input.shape[:2] + tuple(out))
    kernel.__name__ = f"grid_sampler_{nd}d"
    return kernel


def _grid_sampler_backward_kernel(nd):
    def kernel(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
        if interpolation_mode == 2:
            points, scales = _bicubic_points(input, grid, padding_mode, align_corners)
            coord_grads = scales[::-1]          # (per spatial axis: H, then W)
            points = [(flat, weight, d[::-1], valid) for flat, weight, d, valid in points]
        else:
            points, coord_grads, _ = _sample_points(input, grid, interpolation_mode, padding_mode, align_corners)
        n, c = input.shape[:2]
        g = grad_output.reshape(n, c, -1)
        grad_input = grad_grid = None
        if output_mask[0]:
            plane = 1
            for s in input.shape[2:]:
                plane *= s
            rows = (_arange_like(input, n)[:, None, None] * c + _arange_like(input, c)[None, :, None]) * plane
            total = _zeros_like(input, n * c * plane)
            for flat, weight, _, _ in points:
                where = xp.broadcast_to(rows + flat[:, None, :], g.shape).reshape(-1)
                total += xp.bincount(where, (g * weight[:, None, :]).reshape(-1), minlength=total.size).astype(
                    input.dtype, copy=False)
            grad_input = total.reshape(input.shape)
        if output_mask[1]:
            grad_grid = _zeros_like(grid, grid.shape).reshape(n, -1, nd)
            if interpolation_mode != 1:
                for flat, _, dweights, valid in points:
                    read = (_gather(input, flat) * g).sum(axis=1) * valid      # (N, P)
                    for axis in range(nd):
                        grad_grid[..., nd - 1 - axis] += read * dweights[axis] * coord_grads[axis]
            grad_grid = grad_grid.reshape(grid.shape)
        return grad_input, grad_grid
    kernel.__name__ = f"grid_sampler_{nd}d_backward"
    return kernel


def _bilinear_second_derivatives(input, grid, padding_mode, align_corners):
    """For each neighbour (in ``_sample_points``' order): ``[a][k]`` = d^2 weight / d coord_a d coord_k
    (None where 0: a bilinear weight is linear along each axis)."""
    spatial = input.shape[2:]
    nd, n = len(spatial), grid.shape[0]
    frac = []
    for axis, size in enumerate(spatial):
        c, _ = _source_index(grid[..., nd - 1 - axis].reshape(n, -1), size, padding_mode, align_corners)
        frac.append(c - xp.floor(c))
    second = []
    for offsets in itertools.product((0, 1), repeat=nd):
        factors = [f if o else 1 - f for f, o in zip(frac, offsets)]
        signs = [1.0 if o else -1.0 for o in offsets]
        table = [[None] * nd for _ in range(nd)]
        for a in range(nd):
            for k in range(nd):
                if a != k:
                    d = xp.full_like(frac[0], signs[a] * signs[k])
                    for o in range(nd):
                        if o not in (a, k):
                            d = d * factors[o]
                    table[a][k] = d
        second.append(table)
    return second


def _cubic_coefficients_second(t):
    """d/dt of :func:`_cubic_coefficients_grad` (torch's sign convention kept)."""
    a = _CUBIC_A
    x0, x1, x2, x3 = -1 - t, -t, 1 - t, 2 - t
    return [6 * a * x0 + 10 * a, 6 * (a + 2) * x1 + 2 * (a + 3), -6 * (a + 2) * x2 + 2 * (a + 3),
            -6 * a * x3 + 10 * a]


def _bicubic_second_derivatives(input, grid, align_corners):
    """As :func:`_bilinear_second_derivatives` for the 16 bicubic neighbours, axes in (H, W) order."""
    (height, width), n = input.shape[2:], grid.shape[0]
    gx, gy = grid[..., 0].reshape(n, -1), grid[..., 1].reshape(n, -1)
    ix = ((gx + 1) * (width - 1) / 2) if align_corners else (((gx + 1) * width - 1) / 2)
    iy = ((gy + 1) * (height - 1) / 2) if align_corners else (((gy + 1) * height - 1) / 2)
    tx, ty = ix - xp.floor(ix), iy - xp.floor(iy)
    cx, cy = _cubic_coefficients(tx), _cubic_coefficients(ty)
    dx, dy = _cubic_coefficients_grad(tx), _cubic_coefficients_grad(ty)
    ddx, ddy = _cubic_coefficients_second(tx), _cubic_coefficients_second(ty)
    # weight = cx[i] cy[j], d weight / d x = -dx[i] cy[j]: so d/dx of that is -ddx[i] cy[j], and so on
    return [[[-ddy[j] * cx[i], dx[i] * dy[j]], [dx[i] * dy[j], -ddx[i] * cy[j]]]
            for j in range(4) for i in range(4)]


def _grid_sampler_double_backward_kernel(nd):
    def kernel(grad_output, input, grid, grad_grad_input, grad_grad_grid, interpolation_mode, padding_mode,
               align_corners, output_mask):
        if interpolation_mode == 2:
            points, scales = _bicubic_points(input, grid, padding_mode, align_corners)
            coord_grads = scales[::-1]
            points = [(flat, weight, d[::-1], valid) for flat, weight, d, valid in points]
            second = _bicubic_second_derivatives(input, grid, align_corners)
        else:
            points, coord_grads, _ = _sample_points(input, grid, interpolation_mode, padding_mode, align_corners)
            second = _bilinear_second_derivatives(input, grid, padding_mode, align_corners) \
                if interpolation_mode == 0 else None
        n, c = input.shape[:2]
        g = grad_output.reshape(n, c, -1)
        smooth = interpolation_mode != 1          # nearest: the weights do not move with the grid
        gg_grid = grad_grad_grid.reshape(n, -1, nd) if grad_grad_grid is not None and smooth else None
        # h[a]: the grid gradient's incoming gradient along axis a, through the coordinate's derivative
        h = [gg_grid[..., nd - 1 - a] * coord_grads[a] for a in range(nd)] if gg_grid is not None else None
        plane = 1
        for size in input.shape[2:]:
            plane *= size
        d_g = _zeros_like(g, g.shape)
        d_input = _zeros_like(input, n * c * plane)
        d_grid = _zeros_like(grid, (n, g.shape[2], nd))
        rows = (_arange_like(input, n)[:, None, None] * c + _arange_like(input, c)[None, :, None]) * plane
        for p, (flat, weight, dweights, valid) in enumerate(points):
            if grad_grad_input is not None:
                read_gg = _gather(grad_grad_input, flat)                       # (N, C, P)
                d_g += read_gg * weight[:, None, :]
                if smooth and output_mask[2]:
                    both = (g * read_gg).sum(axis=1) * valid
                    for k in range(nd):
                        d_grid[..., nd - 1 - k] += both * dweights[k] * coord_grads[k]
            if h is None:
                continue
            mix = dweights[0] * h[0]
            for a in range(1, nd):
                mix = mix + dweights[a] * h[a]
            mix = mix * valid                                                  # (N, P)
            read = _gather(input, flat)
            d_g += read * mix[:, None, :]
            if output_mask[1]:
                where = xp.broadcast_to(rows + flat[:, None, :], g.shape).reshape(-1)
                d_input += xp.bincount(where, (g * mix[:, None, :]).reshape(-1), minlength=d_input.size).astype(
                    input.dtype, copy=False)
            if output_mask[2]:
                both = (read * g).sum(axis=1) * valid
                for k in range(nd):
                    acc = None
                    for a in range(nd):
                        if second[p][a][k] is not None:
                            term = second[p][a][k] * h[a]
                            acc = term if acc is None else acc + term
                    if acc is not None:
                        d_grid[..., nd - 1 - k] += both * acc * coord_grads[k]
        return (d_g.reshape(grad_output.shape) if output_mask[0] else None,
                d_input.reshape(input.shape) if output_mask[1] and h is not None else None,
                d_grid.reshape(grid.shape) if output_mask[2] else None)
    kernel.__name__ = f"grid_sampler_{nd}d_double_backward"
    return kernel


def _triple_backward_not_implemented(nd):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '_grid_sampler_{nd}d_double_backward' is not implemented in "
                                  "glasstorch (a third derivative through grid_sample)")
    return formula


def _declare_sampler(nd):
    not_implemented = _triple_backward_not_implemented(nd)
    double_backward = defop(
        f"_grid_sampler_{nd}d_double_backward(Tensor grad_output, Tensor input, Tensor grid, Tensor? grad_grad_input, "
        "Tensor? grad_grad_grid, int interpolation_mode, int padding_mode, bool align_corners, "
        "bool[3] output_mask) -> (Tensor, Tensor, Tensor)", _grid_sampler_double_backward_kernel(nd),
        node="NotImplemented", grad_grad_input=not_implemented, grad_grad_grid=not_implemented,
        grad_output=not_implemented, input=not_implemented, grid=not_implemented)

    def double_formula(grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                       output_mask):
        gg_input, gg_grid = grads
        if gg_input is None and gg_grid is None:
            return None, None, None
        return double_backward(grad_output, input, grid, gg_input, gg_grid, interpolation_mode, padding_mode,
                               align_corners, list(output_mask))

    backward = defop(f"grid_sampler_{nd}d_backward(Tensor grad_output, Tensor input, Tensor grid, "
                     "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> "
                     "(Tensor, Tensor)", _grid_sampler_backward_kernel(nd),
                     node=f"GridSampler{nd}DBackwardBackward0",
                     joint={("grad_output", "input", "grid"): double_formula})

    def formula(grad, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
        return backward(grad, input, grid, interpolation_mode, padding_mode, align_corners, list(output_mask))

    forward = defop(f"grid_sampler_{nd}d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
                    "bool align_corners) -> Tensor", _grid_sampler_kernel(nd), node=f"GridSampler{nd}DBackward0",
                    joint={("input", "grid"): formula})
    return forward, backward


grid_sampler_2d_op, grid_sampler_2d_backward_op = _declare_sampler(2)
grid_sampler_3d_op, grid_sampler_3d_backward_op = _declare_sampler(3)


@overridable(defaults_by_keyword=True)
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` read at the points of ``grid`` (see the module docstring): (N, C, H_out, W_out)."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warnings.warn(_ALIGN_WARNING)
        align_corners = False
    op = grid_sampler_3d_op if input.ndim == 5 else grid_sampler_2d_op
    return op(input, grid, _MODES[mode], _PADDINGS[padding_mode], bool(align_corners))


# ---- affine_grid ----------------------------------------------------------------------------------------
def _linspace_from_neg_one(n, align_corners, dtype):
    if n <= 1:
        return xp.zeros(1 if n == 1 else 0, dtype)
    r = xp.linspace(-1, 1, n).astype(dtype)
    return r * (n - 1) / n if not align_corners else r


def _base_grid(size, align_corners, dtype):
    """(N, *spatial, d + 1): each position's normalized (x, y[, z], 1)."""
    n, spatial = size[0], list(size[2:])
    nd = len(spatial)
    base = xp.empty([n] + spatial + [nd + 1], dtype)
    for k in range(nd):          # coordinate k (x, y, z) runs along spatial axis nd - 1 - k
        axis = nd - 1 - k
        shape = [1] * nd
        shape[axis] = spatial[axis]
        base[..., k] = _linspace_from_neg_one(spatial[axis], align_corners, dtype).reshape(shape)
    base[..., nd] = 1
    return base


def _affine_grid_kernel(theta, size, align_corners):
    nd = len(size) - 2
    base = _on_device_of(theta, _base_grid(size, align_corners, theta.dtype)).reshape(size[0], -1, nd + 1)
    return (base @ xp.swapaxes(theta, 1, 2)).reshape(tuple(size[:1]) + tuple(size[2:]) + (nd,))


def _affine_grid_backward_kernel(grad, size, align_corners):
    nd = len(size) - 2
    base = _on_device_of(grad, _base_grid(size, align_corners, grad.dtype)).reshape(size[0], -1, nd + 1)
    return xp.swapaxes(xp.swapaxes(base, 1, 2) @ grad.reshape(size[0], -1, nd), 1, 2)


affine_grid_generator_backward_op = defop(
    "affine_grid_generator_backward(Tensor grad, SymInt[] size, bool align_corners) -> Tensor",
    _affine_grid_backward_kernel, node="AffineGridGeneratorBackwardBackward0",
    grad=lambda grad, size, align_corners: affine_grid_generator_op(grad, size, align_corners))
affine_grid_generator_op = defop(
    "affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor", _affine_grid_kernel,
    node="AffineGridGeneratorBackward0",
    theta=lambda grad, size, align_corners: affine_grid_generator_backward_op(grad, size, align_corners))


@overridable(defaults_by_keyword=True)
def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) -- or (N, D, H, W, 3) -- of the affine maps ``theta`` (N, 2, 3) --
    or (N, 3, 4) -- for an output of ``size`` (N, C, H, W), to be given to grid_sample."""
    if align_corners is None:
        _warnings.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, list(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                       "align_corners=True. This is not an issue for standard resizing but it may be for affine "
                       "transforms. Please read the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, "
                           f"{len(size) - 1}] but got: [{theta.shape[0]}, {theta.shape[2]}].")
    return affine_grid_generator_op(theta, size, bool(align_corners))
