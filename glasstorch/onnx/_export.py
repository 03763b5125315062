"""``torch.onnx.export`` from the graph ``torch.compile`` captures (``glasstorch/_dynamo``).

The model runs once under capture (in eval mode, without autograd, ``fullgraph=True``: a graph
break cannot be exported), which gives the aten ops of its forward as a Graph. Each aten op becomes
the ONNX op that computes the same (``_ONNX`` below); parameters and buffers become initializers,
the tensors in ``args`` the graph's inputs. An op with no entry here (or a call the capture kept
whole, an *eager island*: an op not on the dispatch seam yet) raises, naming it, and no file is
written. Needs the ``onnx`` package (``pip install onnx``), imported only here.
"""
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


_ONNX = {
    "add.Tensor": _binary("Add"), "sub.Tensor": _binary("Sub"), "mul.Tensor": _binary("Mul"),
    "div.Tensor": _binary("Div"),
    "relu.default": _unary("Relu"), "tanh.default": _unary("Tanh"), "sigmoid.default": _unary("Sigmoid"),
    "exp.default": _unary("Exp"), "log.default": _unary("Log"), "sqrt.default": _unary("Sqrt"),
    "neg.default": _unary("Neg"), "sin.default": _unary("Sin"), "cos.default": _unary("Cos"),
    "abs.default": _unary("Abs"), "reciprocal.default": _unary("Reciprocal"),
    "mm.default": lambda h, node, ins, out, constant: [h.make_node("MatMul", ins[:2], [out])],
    "addmm.default": _addmm, "t.default": _t, "sum.default": _sum, "sum.dim_IntList": _sum_dim,
}


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
        if node.meta.get("island") or not hasattr(node.target, "_schema"):
            raise UnsupportedOperatorError(
                f"torch.onnx.export: {getattr(node.target, '__qualname__', node.target)} (at {node.meta.get('stack')}) "
                "is not on the dispatch seam yet, so its ops are not in the captured graph and cannot be exported")
        write = _ONNX.get(node.target.__name__)
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
    opset = opset_version or 18
    proto = helper.make_model(helper.make_graph(nodes, type(model).__name__ if is_module else "main", inputs,
                                                outputs, initializers),
                              opset_imports=[helper.make_opsetid("", opset)], producer_name="glasstorch")
    proto.ir_version = min(proto.ir_version, 10)          # readable by onnxruntime releases of the last years
    onnx.checker.check_model(proto)
    if f is not None:
        onnx.save(proto, f)
    return proto
