r"""``LazyModuleMixin``: modules that learn their parameter shapes from the first input.

A lazy module (``LazyLinear(out_features)``) starts with
:class:`~glasstorch.nn.parameter.UninitializedParameter` s.  Two hooks do the rest:

* a forward pre-hook (``_infer_parameters``) calls ``initialize_parameters(*input)``
  on the first call, which materializes the parameters from the input's shape;
  then both hooks are removed and the module's class becomes ``cls_to_become``
  (``LazyLinear`` -> ``Linear``);
* a ``load_state_dict`` pre-hook (``_lazy_load_hook``) materializes them from a
  checkpoint's shapes instead, so a lazy model can load a trained state dict.

A layer subclasses ``LazyModuleMixin`` first and the regular layer second::

    class LazyLinear(LazyModuleMixin, Linear):
        cls_to_become = Linear
        weight: UninitializedParameter

        def __init__(self, out_features, bias=True):
            super().__init__(0, 0, False)
            self.weight = UninitializedParameter()
            ...

        def initialize_parameters(self, input):
            if self.has_uninitialized_params():
                with torch.no_grad():
                    self.in_features = input.shape[-1]
                    self.weight.materialize((self.out_features, self.in_features))
                    self.reset_parameters()
"""

import itertools

from glasstorch.autograd.grad_mode import no_grad
from glasstorch.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    r"""A mixin for modules that lazily initialize parameters ("lazy modules").

    Until the first forward they hold uninitialized parameters, which must not
    be used; afterwards they hold regular parameters.  Convert the network's
    dtype/device first (the uninitialized parameters remember both), then do
    a "dry run" with a batch of the right size, then build the optimizer.

    Lazy modules initialize after their eager neighbours, so the order in
    which the random number generator is consumed (and thus the initial
    values) differs from the same network built eagerly.
    """

    # the class the module turns into once every parameter is materialized
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # an uninitialized parameter is saved as itself: it cannot be detached
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        """``load_state_dict`` pre-hook: give each uninitialized parameter or
        buffer the shape of its (initialized) entry in the checkpoint, so that
        the ordinary copy in ``_load_from_state_dict`` can fill it."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        r"""Materialize the parameters from the first input's properties (shape).
        Lazy layers implement this; it keeps shape inference apart from ``forward``."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        r"""Check if a module has parameters that are not initialized."""
        for param in itertools.chain(self._parameters.values(), self._buffers.values()):
            if is_lazy(param):
                return True
        return False

    def _infer_parameters(self, module, args, kwargs=None):
        r"""Forward pre-hook run on the first call: initialize the parameters from
        the input, check nothing was left uninitialized, remove both hooks and
        become ``cls_to_become``."""
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )
