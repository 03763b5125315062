"""``torch.onnx.export`` from the graph ``torch.compile`` captures (``glasstorch/_dynamo``).

The model runs once under capture (in eval mode, without autograd, ``fullgraph=True``: a graph
break cannot be exported), which gives the aten ops of its forward as a Graph. Each aten op becomes
the ONNX op that computes the same (``_ONNX`` below); parameters and buffers become initializers,
the tensors in ``args`` the graph's inputs. Convolutions (1-3-D, transposed, grouped, dilated),
average and max pooling (1-3-D, padded, ceil mode), adaptive average pooling (global, or of an
input that divides evenly), batch norm in eval mode, linear layers, reshapes and element-wise ops are
written; max pooling and batch norm reach the graph as calls the capture keeps whole (they have
several results), and are written from their arguments. An op with no entry here (or another call
kept whole, an *eager island*) raises, naming it, and no file is written. Needs the ``onnx`` package (``pip install onnx``), imported only here.
"""
import operator

import numpy as np


class UnsupportedOperatorError(RuntimeError):
    """An op of the captured graph that the exporter cannot write (torch.onnx's error of that name)."""


def _onnx():
    try:
        import onnx
    except ImportError:
        raise RuntimeError("torch.onnx.export needs the onnx package, which is not installed: "
                           "pip install onnx (or pip install glasstorch[onnx])") from None
    return onnx


# aten op -> function(helper, node, input names, output name, constant) -> list of ONNX nodes.
# ``constant(value, dtype)`` makes an initializer and returns its name (a Python number's operand).
def _binary(onnx_op):
    def write(h, node, ins, out, constant):
        args = _args(node)
        if args.get("alpha", 1) != 1:
            return None
        return [h.make_node(onnx_op, ins[:2], [out])]
    return write


def _unary(onnx_op):
    return lambda h, node, ins, out, constant: [h.make_node(onnx_op, ins[:1], [out])]


def _t(h, node, ins, out, constant):
    if len(node.meta["shape"]) < 2:
        return [h.make_node("Identity", ins[:1], [out])]
    return [h.make_node("Transpose", ins[:1], [out], perm=[1, 0])]


def _addmm(h, node, ins, out, constant):
    args = _args(node)
    # Gemm: alpha * A @ B + beta * C, C broadcast (unidirectionally) to the product's shape
    return [h.make_node("Gemm", [ins[1], ins[2], ins[0]], [out], alpha=float(args.get("alpha", 1)),
                        beta=float(args.get("beta", 1)))]


def _sum(h, node, ins, out, constant):
    return [h.make_node("ReduceSum", ins[:1], [out], keepdims=0)]


def _sum_dim(h, node, ins, out, constant):
    args = _args(node)
    dims = args.get("dim")
    if not dims:
        return [h.make_node("ReduceSum", ins[:1], [out], keepdims=int(bool(args.get("keepdim"))))]
    axes = constant(np.array(list(dims), dtype=np.int64), None)
    return [h.make_node("ReduceSum", [ins[0], axes], [out], keepdims=int(bool(args.get("keepdim"))))]


def _pads(padding, nd):
    """torch's symmetric padding per spatial dim -> ONNX's begins then ends."""
    padding = list(padding) if isinstance(padding, (list, tuple)) else [padding] * nd
    return padding + padding


def _spatial(value, nd):
    return list(value) if isinstance(value, (list, tuple)) else [value] * nd


def _convolution(h, node, ins, out, constant):
    """aten.convolution -> Conv (ConvTranspose when transposed), the bias a third input when given."""
    a = _args(node)
    nd = len(node.meta["shape"]) - 2
    inputs = [ins[0], ins[1]] + ([ins[2]] if a.get("bias") is not None else [])
    attrs = dict(strides=_spatial(a["stride"], nd), pads=_pads(a["padding"], nd),
                 dilations=_spatial(a["dilation"], nd), group=int(a["groups"]))
    if a["transposed"]:
        return [h.make_node("ConvTranspose", inputs, [out], output_padding=_spatial(a["output_padding"], nd), **attrs)]
    return [h.make_node("Conv", inputs, [out], **attrs)]


def _avg_pool(h, node, ins, out, constant):
    a = _args(node)
    if a.get("divisor_override") is not None:
        return None
    nd = len(node.meta["shape"]) - 2
    kernel = _spatial(a["kernel_size"], nd)
    return [h.make_node("AveragePool", ins[:1], [out], kernel_shape=kernel,
                        strides=_spatial(a.get("stride") or kernel, nd), pads=_pads(a.get("padding", 0), nd),
                        ceil_mode=int(bool(a.get("ceil_mode"))),
                        count_include_pad=int(bool(a.get("count_include_pad", True))))]


def _adaptive_avg_pool(h, node, ins, out, constant, input_shape):
    """A global pool for output 1, an AveragePool when the input divides evenly, else nothing."""
    size = list(node.meta["shape"][2:])
    spatial = list(input_shape[2:])
    if all(s == 1 for s in size):
        return [h.make_node("GlobalAveragePool", ins[:1], [out])]
    if any(i % o for i, o in zip(spatial, size)):
        return None
    kernel = [i // o for i, o in zip(spatial, size)]
    return [h.make_node("AveragePool", ins[:1], [out], kernel_shape=kernel, strides=kernel)]


def _mean_dim(h, node, ins, out, constant):
    a = _args(node)
    if a.get("dtype") is not None:
        return None
    dims = a.get("dim")
    keepdims = int(bool(a.get("keepdim")))
    if not dims:
        return [h.make_node("ReduceMean", ins[:1], [out], keepdims=keepdims)]
    axes = constant(np.array(list(dims), dtype=np.int64), None)
    return [h.make_node("ReduceMean", [ins[0], axes], [out], keepdims=keepdims)]


def _reshape(h, node, ins, out, constant):
    """A view, squeeze or unsqueeze: the shapes are static, so one Reshape to the result's shape."""
    shape = constant(np.array(list(node.meta["shape"]), dtype=np.int64), None)
    return [h.make_node("Reshape", [ins[0], shape], [out])]


_ONNX = {
    "add.Tensor": _binary("Add"), "sub.Tensor": _binary("Sub"), "mul.Tensor": _binary("Mul"),
    "div.Tensor": _binary("Div"),
    "relu.default": _unary("Relu"), "tanh.default": _unary("Tanh"), "sigmoid.default": _unary("Sigmoid"),
    "exp.default": _unary("Exp"), "log.default": _unary("Log"), "sqrt.default": _unary("Sqrt"),
    "neg.default": _unary("Neg"), "sin.default": _unary("Sin"), "cos.default": _unary("Cos"),
    "abs.default": _unary("Abs"), "reciprocal.default": _unary("Reciprocal"),
    "mm.default": lambda h, node, ins, out, constant: [h.make_node("MatMul", ins[:2], [out])],
    "addmm.default": _addmm, "t.default": _t, "sum.default": _sum, "sum.dim_IntList": _sum_dim,
    "convolution.default": _convolution, "avg_pool2d.default": _avg_pool, "avg_pool3d.default": _avg_pool,
    "mean.dim": _mean_dim,
    **dict.fromkeys(("view.default", "_unsafe_view.default", "_reshape_alias.default", "unsqueeze.default",
                     "squeeze.dim", "squeeze.dims", "squeeze.default", "flatten.using_ints"), _reshape),
}
_SHAPED = {"_adaptive_avg_pool2d.default": _adaptive_avg_pool, "_adaptive_avg_pool3d.default": _adaptive_avg_pool}


# Public calls the capture keeps whole (ops with several results: max pooling with its indices,
# batch_norm with its statistics), written from their arguments; only their first result may be used.
def _max_pool_island(h, node, ins, out, constant, bound, nd):
    a = bound
    if a.get("return_indices"):
        return None
    kernel = _spatial(a["kernel_size"], nd)
    stride = a.get("stride")
    return [h.make_node("MaxPool", ins[:1], [out], kernel_shape=kernel,
                        strides=_spatial(stride if stride not in (None, []) else kernel, nd),
                        pads=_pads(a.get("padding", 0), nd), dilations=_spatial(a.get("dilation", 1), nd),
                        ceil_mode=int(bool(a.get("ceil_mode"))))]


def _batch_norm_island(h, node, ins, out, constant, bound, nd, names, dtype):
    """F.batch_norm in eval mode -> BatchNormalization (missing weight/bias: ones/zeros)."""
    if bound.get("training"):
        return None
    from ..fx.graph import Node
    features = bound["running_mean"].meta["shape"][0]

    def operand(key, fill):
        v = bound.get(key)
        return names[v] if isinstance(v, Node) else constant(np.full(features, fill), dtype)
    return [h.make_node("BatchNormalization", [names[bound["input"]], operand("weight", 1.0), operand("bias", 0.0),
                                               names[bound["running_mean"]], names[bound["running_var"]]], [out],
                        epsilon=float(bound.get("eps", 1e-5)))]


def _island(h, node, names, constant):
    """The ONNX nodes of an island the exporter knows (by its function), or None."""
    import inspect
    func = node.target
    name = getattr(func, "__name__", "")
    try:
        bound = inspect.signature(func).bind(*node.args, **node.kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    a = dict(bound.arguments)
    from ..fx.graph import Node
    first = a.get("input")
    if not isinstance(first, Node):
        return None
    ins = [names[first]]
    if name in ("max_pool1d", "max_pool2d", "max_pool3d"):
        return _max_pool_island(h, node, ins, node.name, constant, a, int(name[-2]))
    if name == "batch_norm":
        return _batch_norm_island(h, node, ins, node.name, constant, a, None, names, first.meta["dtype"].numpy_dtype)
    return None


def _several(h, node, names, constant):
    """The ONNX nodes of an aten op with several results (max pooling with its indices, batch norm in
    eval mode with its statistics), or None. Their arguments have the public functions' names."""
    name = node.target.__name__
    positional = [a.name for a in node.target._schema.arguments if not a.kwarg_only]
    bound = dict(zip(positional, node.args), **node.kwargs)
    if name in ("max_pool1d_with_indices.default", "max_pool2d_with_indices.default",
                "max_pool3d_with_indices.default"):
        return _max_pool_island(h, node, [names[bound["self"]]], node.name, constant, bound,
                                int(name[len("max_pool")]))
    if name == "native_batch_norm.default":
        first = bound["input"]
        return _batch_norm_island(h, node, [names[first]], node.name, constant, bound, None, names,
                                  first.meta["dtype"].numpy_dtype)
    return None


def _args(node):
    from .._dynamo.codegen import _schema_args
    return _schema_args(node)


def export(model, args=(), f=None, *, input_names=None, output_names=None, opset_version=None, **ignored):
    """Write ``model`` (a Module or function) called on ``args`` to the ONNX file ``f``."""
    onnx = _onnx()
    from onnx import helper, numpy_helper
    from .._tensor import Tensor
    from ..autograd import grad_mode
    from ..fx.graph import Node, for_each_node
    from ..nn.modules.module import Module
    from .._dynamo import capture as _capture, exc

    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = {}
    if args and isinstance(args[-1], dict):          # torch's convention: a trailing dict holds keyword arguments
        args, kwargs = args[:-1], args[-1]
    is_module = isinstance(model, Module)
    was_training = model.training if is_module else None
    if is_module:
        model.eval()                                  # torch exports in eval mode (training=TrainingMode.EVAL)
    try:
        with grad_mode.no_grad():
            try:
                _, cap = _capture.capture(model.__call__ if is_module else model, args, kwargs,
                                          (model,) if is_module else (), fullgraph=True)
            except exc.Unsupported as e:
                raise UnsupportedOperatorError(f"torch.onnx.export: the model's forward cannot be captured whole: "
                                               f"{e}") from None
    finally:
        if is_module:
            model.train(was_training)

    graph = cap.graph
    initializers, inputs, nodes = [], [], []
    names = {}
    counter = [0]

    def constant(value, dtype):
        arr = np.asarray(value, dtype=dtype)
        counter[0] += 1
        name = f"_const_{counter[0]}"
        initializers.append(numpy_helper.from_array(arr, name))
        return name

    arg_count = 0
    for node, source in cap.inputs:
        if source[0] == "arg":
            name = input_names[arg_count] if input_names and arg_count < len(input_names) else node.name
            arg_count += 1
            inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(node.meta["dtype"].numpy_dtype), list(node.meta["shape"])))
        else:
            name = node.name
            initializers.append(numpy_helper.from_array(np.ascontiguousarray(source[-1]._data), name))
        names[node] = name
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        several = node.args[0] if node.target is operator.getitem else None
        if several is not None and (several.meta.get("island") or "num_outputs" in several.meta) \
                and node.args[1] == 0 and several in names:
            nodes.append(helper.make_node("Identity", [names[node.args[0]]], [node.name]))
            names[node] = node.name
            continue
        if several is not None and "num_outputs" in several.meta and not several.meta.get("island"):
            if not any(node in n.all_input_nodes for n in graph.nodes):
                continue                 # (the capture keeps every result of such an op: the backward may read one)
            raise UnsupportedOperatorError(f"torch.onnx.export: result {node.args[1]} of aten::{several.target.__name__} "
                                           f"(at {several.meta.get('stack')}) has no ONNX form in glasstorch's "
                                           "exporter yet")
        if node.meta.get("island"):
            written = _island(helper, node, names, constant)
        elif "num_outputs" in node.meta:        # an aten op with several results: only its first may be used
            written = _several(helper, node, names, constant)
        else:
            written = None
        if written is not None:
            nodes += written
            names[node] = node.name
            continue
        if node.meta.get("island") or not hasattr(node.target, "_schema"):
            raise UnsupportedOperatorError(
                f"torch.onnx.export: {getattr(node.target, '__qualname__', node.target)} (at {node.meta.get('stack')}) "
                "is not on the dispatch seam yet, so its ops are not in the captured graph and cannot be exported")
        write = _ONNX.get(node.target.__name__)
        if node.target.__name__ in _SHAPED:
            shaped = _SHAPED[node.target.__name__]
            write = (lambda h, n, i, o, c, s=node.args[0].meta["shape"], f=shaped: f(h, n, i, o, c, s))
        ins = []
        for v in node.args:
            if isinstance(v, Node):
                ins.append(names[v])
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                ins.append(constant(v, node.meta["dtype"].numpy_dtype))
        written = write(helper, node, ins, node.name, constant) if write is not None else None
        if written is None:
            raise UnsupportedOperatorError(f"torch.onnx.export: aten::{node.target.__name__} (at "
                                           f"{node.meta.get('stack')}) has no ONNX form in glasstorch's exporter yet")
        nodes += written
        names[node] = node.name
    out_nodes = []
    for_each_node(graph.nodes[-1].args[0], out_nodes.append)
    outputs = []
    for k, node in enumerate(out_nodes):
        name = output_names[k] if output_names and k < len(output_names) else f"output_{k}"
        nodes.append(helper.make_node("Identity", [names[node]], [name]))
        outputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(node.meta["dtype"].numpy_dtype), list(node.meta["shape"])))
    used = {name for n in nodes for name in n.input}     # (numbers given to ops that take them as attributes)
    initializers = [t for t in initializers if not t.name.startswith("_const_") or t.name in used]
    opset = opset_version or 18
    proto = helper.make_model(helper.make_graph(nodes, type(model).__name__ if is_module else "main", inputs,
                                                outputs, initializers),
                              opset_imports=[helper.make_opsetid("", opset)], producer_name="glasstorch")
    proto.ir_version = min(proto.ir_version, 10)          # readable by onnxruntime releases of the last years
    onnx.checker.check_model(proto)
    if f is not None:
        onnx.save(proto, f)
    return proto
