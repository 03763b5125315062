"""Hook plumbing of ``nn.Module``: the ``BackwardHook`` that turns a module's full backward hooks
into graph hooks (torch keeps it in ``torch/utils/hooks.py``; ``glasstorch.utils.hooks`` re-exports
it). ``RemovableHandle`` is the core's (``glasstorch/_hooks.py``), re-exported here.
"""

import warnings

from glasstorch._hooks import RemovableHandle, unserializable_hook  # noqa: F401  (defined in the core)
from glasstorch._tensor import Tensor
from glasstorch.autograd.function import Function
from glasstorch.autograd.grad_mode import is_grad_enabled

__all__ = ["RemovableHandle", "unserializable_hook", "BackwardHook", "BackwardHookFunction"]


class BackwardHookFunction(Function):
    r"""Identity on any number of tensors.  Its only job is to put one node,
    ``BackwardHookFunctionBackward``, where a module's inputs enter its
    forward and one where its outputs leave it; hooks on those two nodes see
    exactly the module's ``grad_input`` and ``grad_output``::

        x --> [BackwardHookFunctionBackward] --> forward(...) --> [BackwardHookFunctionBackward] --> y
                 hook sees grad_input                                 hook sees grad_output
    """

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


class BackwardHook:
    """Implements ``Module.register_full_backward_hook`` and
    ``register_full_backward_pre_hook`` with two identity nodes.

    It handles:
      - ignoring non-Tensor inputs and replacing them by ``None`` before calling the user hook
      - generating the node that captures a set of tensors' gradients
        (``BackwardHookFunction`` applied to all tensor inputs, then to all tensor outputs)
      - linking the gradients captured at the outputs (``grad_output``, seen first in
        backward) with those captured at the inputs (``grad_input``, seen last)
      - calling the user hooks once both are available; a hook's return value replaces
        ``grad_input`` (full hooks) or ``grad_output`` (pre-hooks).
    """

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module

        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _pack_with_none(self, indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values, strict=True):
            res[idx] = val
        return tuple(res)

    def _unpack_none(self, indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # The gradient reached the module's inputs without passing
                # through its outputs (e.g. double backward): nothing to pair.
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        """Route the tensors in ``args`` through one ``BackwardHookFunction`` node and
        call ``fn(node)``.  Returns the new args and the positions of the tensors."""
        tensors_idx = []
        tensors = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad

        if not (requires_grad and is_grad_enabled()):
            return args, None

        new_tensors = BackwardHookFunction.apply(*tensors)
        if not isinstance(new_tensors, tuple):  # a one-tensor Function returns it bare
            new_tensors = (new_tensors,)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")

        grad_fns = [
            t.grad_fn
            for t in new_tensors
            if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"
        ]
        if len(grad_fns) == 0:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open "
                "an issue with a code sample to reproduce this."
            )
        fn(grad_fns[0])

        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors, strict=True):
            arg_list[idx] = val
        if type(args) is tuple:
            out = tuple(arg_list)
        else:
            out = type(args)(*arg_list)  # a namedtuple of outputs stays one
        return out, tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def fn(grad_fn) -> None:
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(
                    self.output_tensors_index, grad_output, self.n_outputs
                )

                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        actual_len = len(hook_grad_outputs)
                        if actual_len != expected_len:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, "
                                f"got {actual_len}, but expected {expected_len}"
                            )
                        self.grad_outputs = hook_grad_outputs

                # self.grad_outputs is cleared below but must still be returned
                local_grad_outputs = self.grad_outputs

                # No input requires grad: the input-side node does not exist, so
                # the full hooks fire here, with grad_input all None.
                if self.input_tensors_index is None:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with "
                        "respect to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                        "for more details.",
                        stacklevel=5,
                    )
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(el is None for el in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires "
                                "gradient should always return None or None for all gradients."
                            )
                    self.grad_outputs = None

                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False

        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx

        if not is_tuple:
            res = res[0]
        return res
