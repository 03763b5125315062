"""``SummaryWriter.add_graph``: the model's graph for TensorBoard's Graphs tab, from glasstorch's own
recording of a forward pass.

torch traces the model with TorchScript and logs the forward ops (``aten::linear``). glasstorch logs
the graph autograd recorded while the model ran -- the graph ``loss.backward()`` walks and
``glasstorch.inspection.draw`` shows -- read in the forward direction: one node per autograd node
(its op is the node's torch name, ``AddmmBackward0``), one per parameter (op ``Parameter``), one per
model input and output (op ``IO Node``, as torch logs them). Each node sits in the name scope of the
module that created it, named as torch names scopes (``Sequential/Linear[0]/AddmmBackward0``), so
TensorBoard folds the graph by module.

How a node finds its module: every submodule gets a forward pre-hook (noting the ``grad_fn`` of its
inputs) and a forward hook that walks back from its outputs to those inputs, claiming the nodes no
inner module claimed first (inner modules finish, and claim, before their parents). The hooks are
removed when the pass ends; the model runs in eval mode, so dropout and batch norm statistics are
not disturbed, and its training flag is restored.
"""
import glasstorch as torch
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ...inspection.draw import draw


def _tensors(value):
    """The tensors in a module's input or output (nested tuples, lists and dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def _scope_names(model):
    """module -> its TensorBoard scope: 'Net', 'Net/Sequential[body]', 'Net/Sequential[body]/Linear[0]'."""
    scopes = {model: type(model).__name__}
    for qualified, module in model.named_modules():
        if qualified:
            parent, _, attr = qualified.rpartition(".")
            parent_module = model.get_submodule(parent) if parent else model
            scopes[module] = f"{scopes[parent_module]}/{type(module).__name__}[{attr}]"
    return scopes


class _ScopeRecorder:
    """The forward pre-hooks and hooks that assign autograd nodes to the module that created them."""

    def __init__(self, model):
        self.scopes = _scope_names(model)
        self.node_scope = {}      # id(node) -> scope
        self.keep = []            # the nodes, so their ids stay unique while the graph is built
        self.entry = {}           # id(module) -> stack of sets of input grad_fn ids, one per active call
        self.handles = []
        for module in self.scopes:
            self.handles.append(module.register_forward_pre_hook(self._enter))
            self.handles.append(module.register_forward_hook(self._leave))

    def _enter(self, module, inputs):
        stops = {id(t.grad_fn) for t in _tensors(inputs) if t.grad_fn is not None}
        self.entry.setdefault(id(module), []).append(stops)

    def _leave(self, module, inputs, output):
        stops = self.entry[id(module)].pop()
        scope = self.scopes[module]
        stack = [t.grad_fn for t in _tensors(output) if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if id(node) in seen or id(node) in stops or hasattr(node, "variable"):
                continue
            seen.add(id(node))
            if id(node) not in self.node_scope:
                self.node_scope[id(node)] = scope
                self.keep.append(node)
            stack.extend(child for child, _ in node.next_functions if child is not None)

    def remove(self):
        for handle in self.handles:
            handle.remove()


def _shape_attr(tensor):
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in tensor.shape])
    return {"_output_shapes": AttrValue(list=AttrValue.ListValue(shape=[shape])),
            "attr": AttrValue(s=f"{{ dtype : {tensor.dtype} }}".encode())}


def graph(model, args, verbose=False, use_strict_trace=True):
    """(GraphDef, RunMetadata) for `model` called on `args` (a tensor or a tuple of them)."""
    args = args if isinstance(args, (tuple, list)) else (args,)
    # the inputs become leaves of the recorded graph, so the graph reaches them
    inputs = [a.detach().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in args]
    recorder = _ScopeRecorder(model)
    was_training = model.training
    model.train(False)
    try:
        with torch.enable_grad():
            outputs = _tensors(model(*inputs))
    finally:
        model.train(was_training)
        recorder.remove()
    root = type(model).__name__
    leaf_names = {}
    for qualified, parameter in model.named_parameters():
        owner, _, attr = qualified.rpartition(".")
        leaf_names[id(parameter)] = (f"{recorder.scopes[model.get_submodule(owner) if owner else model]}/{attr}",
                                     "Parameter")
    for i, tensor in enumerate(inputs):
        if isinstance(tensor, torch.Tensor):
            leaf_names[id(tensor)] = (f"input/input.{i}", "IO Node")

    drawing = draw(*outputs)
    names, ops, attrs, used = {}, {}, {}, set()
    for record in drawing.nodes:
        if record.kind == "output":
            name, op, attr = f"output/output.{record.id[3:]}", "IO Node", _shape_attr(record.obj)
        elif record.kind == "leaf":
            variable = record.obj.variable
            name, op = leaf_names.get(id(variable), (f"{root}/leaf", "Leaf"))
            attr = _shape_attr(variable)
        else:
            name, op, attr = f"{recorder.node_scope.get(id(record.obj), root)}/{record.name}", record.name, {}
        base, k = name, 1
        while name in used:                      # the second AddmmBackward0 of a scope is AddmmBackward0_1
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        names[record.id], ops[record.id], attrs[record.id] = name, op, attr
    producers = {record.id: [] for record in drawing.nodes}
    for consumer, producer in drawing.edges:     # a drawing's edge runs the gradient's way: consumer -> producer
        producers[consumer].append(names[producer])
    nodes = [NodeDef(name=names[r.id], op=ops[r.id], input=producers[r.id], attr=attrs[r.id]) for r in drawing.nodes]
    if verbose:
        for node in nodes:
            print(f"{node.name} = {node.op}({', '.join(node.input)})")
    stepstats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stepstats
