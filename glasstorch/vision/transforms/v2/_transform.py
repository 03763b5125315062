"""The v2 ``Transform``: one call transforms a whole sample -- an image with its label, a tuple, a
dict -- with the same random parameters for every image in it, and passes everything else through.

    image, label = v2.RandomHorizontalFlip(p=1.0)(image, label)     # the label comes back untouched

The sample is flattened into leaves; a leaf is transformed if it is of a type the transform handles:
PIL images, ``tv_tensors.Image``, and plain tensors -- but a plain tensor only when the sample holds
no image of the other kinds and it is the first plain tensor (so a label tensor next to an image is
left alone). ``make_params`` draws the random parameters once per call, ``transform`` applies them
to one leaf.
"""
import enum

import glasstorch as torch
from glasstorch import nn, Tensor
from glasstorch.utils import _pytree

from ... import _pil
from ...tv_tensors import Image, TVTensor


def is_pure_tensor(inpt):
    """A Tensor that is not a tv_tensor (Image, ...)."""
    return isinstance(inpt, Tensor) and not isinstance(inpt, TVTensor)


def _is_pil(inpt):
    return _pil.is_pil_image(inpt)


def check_type(obj, types_or_checks):
    """Whether `obj` is one of the types, or passes one of the predicate functions."""
    for type_or_check in types_or_checks:
        if isinstance(type_or_check, type) and not isinstance(type_or_check, enum.EnumMeta):
            if isinstance(obj, type_or_check):
                return True
        elif type_or_check(obj):
            return True
    return False


def has_any(flat_inputs, *types_or_checks):
    return any(check_type(inpt, types_or_checks) for inpt in flat_inputs)


def tree_flatten(tree):
    """The leaves of nested tuples/lists/dicts/namedtuples, and a function that rebuilds the structure
    from new leaves (``utils._pytree``'s flattening, as torchvision's v2 uses torch's)."""
    leaves, spec = _pytree.tree_flatten(tree)
    return leaves, spec.unflatten


def query_size(flat_inputs):
    """(height, width) of the images in the sample; they must all agree."""
    sizes = {tuple(_image_chw(inpt)[1:]) for inpt in flat_inputs if _is_image_like(inpt)}
    if not sizes:
        raise TypeError("No image was found in the sample")
    if len(sizes) > 1:
        raise ValueError(f"Found multiple HxW dimensions in the sample: {sorted(sizes)}")
    return sizes.pop()


def query_chw(flat_inputs):
    chws = {tuple(_image_chw(inpt)) for inpt in flat_inputs if _is_image_like(inpt)}
    if not chws:
        raise TypeError("No image or video was found in the sample")
    if len(chws) > 1:
        raise ValueError(f"Found multiple CxHxW dimensions in the sample: {sorted(chws)}")
    return chws.pop()


def _is_image_like(inpt):
    return isinstance(inpt, Tensor) or _is_pil(inpt)


def _image_chw(inpt):
    from . import functional as F
    return F.get_dimensions(inpt)


class Transform(nn.Module):
    """Base class of the v2 transforms (subclass it with ``make_params`` and ``transform``)."""

    _transformed_types = (Tensor, _is_pil)

    def check_inputs(self, flat_inputs):
        pass

    def make_params(self, flat_inputs):
        """The random parameters for this call, drawn once for every transformed leaf."""
        return dict()

    def transform(self, inpt, params):
        raise NotImplementedError

    def _call_kernel(self, functional, inpt, *args, **kwargs):
        """Apply a v2 functional to one leaf; a leaf it does not support passes through unchanged."""
        if isinstance(inpt, Tensor) or _is_pil(inpt):
            return functional(inpt, *args, **kwargs)
        return inpt

    def forward(self, *inputs):
        flat_inputs, rebuild = tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat_inputs)
        return self._transform_leaves(flat_inputs, rebuild)

    def _transform_leaves(self, flat_inputs, rebuild):
        needs_transform_list = self._needs_transform_list(flat_inputs)
        params = self.make_params([inpt for inpt, needs in zip(flat_inputs, needs_transform_list) if needs])
        return rebuild([self.transform(inpt, params) if needs else inpt
                        for inpt, needs in zip(flat_inputs, needs_transform_list)])

    def _needs_transform_list(self, flat_inputs):
        transform_pure_tensor = not has_any(flat_inputs, Image, _is_pil)
        needs_transform_list = []
        for inpt in flat_inputs:
            needs_transform = check_type(inpt, self._transformed_types)
            if needs_transform and is_pure_tensor(inpt):
                needs_transform, transform_pure_tensor = transform_pure_tensor, False
            needs_transform_list.append(needs_transform)
        return needs_transform_list

    def extra_repr(self):
        extra = []
        for name, value in self.__dict__.items():
            if name.startswith("_") or name == "training":
                continue
            if not isinstance(value, (bool, int, float, str, tuple, list, enum.Enum)):
                continue
            extra.append(f"{name}={value}")
        return ", ".join(extra)


class _RandomApplyTransform(Transform):
    """A transform applied to the whole sample with probability `p`."""

    def __init__(self, p=0.5):
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        super().__init__()
        self.p = p

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat_inputs, rebuild = tree_flatten(inputs)
        self.check_inputs(flat_inputs)
        if torch.rand(1) >= self.p:
            return inputs
        return self._transform_leaves(flat_inputs, rebuild)
