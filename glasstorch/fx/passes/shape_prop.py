"""torch.fx.passes.shape_prop: every value's shape, dtype and layout, recorded on its node.

``ShapeProp(gm).propagate(*args)`` runs the graph (an :class:`~glasstorch.fx.Interpreter`) and
stores on each node that makes a tensor ``node.meta["tensor_meta"]``, a :class:`TensorMetadata`
(shape, dtype, requires_grad, stride, memory_format, is_quantized, qparams), and on every node
``node.meta["type"]``, the type of its value.

Give it meta tensors and nothing is computed: the ops of the graph run on the meta device, which
works out shapes, dtypes and strides with the same op definitions and allocates nothing. That is
how a captured graph is asked what it makes for inputs it has not seen (another batch size, a
model too large for memory)::

    gm = torch.fx.GraphModule({}, compiled.graph)          # a graph torch.compile captured
    ShapeProp(gm).propagate(*[t.to("meta") for t in inputs])
    [n.meta["tensor_meta"].shape for n in gm.graph.nodes if "tensor_meta" in n.meta]

(torch's ShapeProp takes a ``fake_mode`` for that; glasstorch's meta tensors are its fake tensors.)
"""
from typing import Any, NamedTuple

from ..._tensor import Tensor
from ...utils._pytree import tree_map
from ..interpreter import Interpreter

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What a pass knows of a tensor without its values."""
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _memory_format(t):
    """The first of torch's memory formats ``t`` is laid out in (None: none of them)."""
    from ... import contiguous_format, channels_last, channels_last_3d
    for fmt in (contiguous_format, channels_last, channels_last_3d):
        if t.is_contiguous(memory_format=fmt):
            return fmt
    return None


def _extract_tensor_metadata(result, include_contiguity=True):
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          _memory_format(result) if include_contiguity else None, False, {})


class ShapeProp(Interpreter):
    def __init__(self, gm, fake_mode=None):
        if fake_mode is not None:
            raise NotImplementedError("glasstorch's ShapeProp has no fake mode: pass meta tensors "
                                      "(tensor.to('meta')) to propagate without computing")
        super().__init__(gm)

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with meta={n.meta}") from e
        found = []

        def extract(obj):
            if isinstance(obj, Tensor):
                found.append(obj)
                return _extract_tensor_metadata(obj)
            return obj
        meta = tree_map(extract, result)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args`` (meta tensors: shapes only) and record every value's metadata;
        returns the graph's result."""
        return self.run(*args)
