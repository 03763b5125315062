"""Weights enums and the model registry (torchvision.models._api).

A model builder takes ``weights=None`` (random initialisation) or a member of its weights enum
(``ResNet18_Weights.IMAGENET1K_V1``, ``.DEFAULT``, or its name as a string). Requested weights are read
from torch's hub cache, ``$TORCH_HOME/hub/checkpoints/<file>`` (``~/.cache/torch/hub/checkpoints``), under
the file name torchvision downloads them as -- so a file torchvision fetched before is used as is.
glasstorch does not download them on its own: when the file is missing, the error says which file,
where, and the one line that downloads it (``torch.hub.load_state_dict_from_url``).
"""
import fnmatch
import functools
import os
import warnings
from dataclasses import dataclass
from enum import Enum

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights", "get_weight",
           "list_models"]


@dataclass
class Weights:
    """Where a set of pretrained weights lives, the preprocessing it expects, and facts about it."""
    url: str
    transforms: object
    meta: dict

    def __eq__(self, other):
        if not isinstance(other, Weights):
            return NotImplemented
        return self.url == other.url and self.meta == other.meta and self.transforms == other.transforms


class WeightsEnum(Enum):
    """The pretrained weights available for one model (``DEFAULT`` is the best of them)."""

    @classmethod
    def verify(cls, obj):
        """None, a member, or a member's name -> the member (TypeError for another enum's member)."""
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                                f"{obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        """The weights, from the hub cache (see the module's docstring)."""
        from ... import hub
        path = hub.cached_file_for(self.url)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"{self!r}: the weight file {os.path.basename(path)} is not in torch's cache ({path}). glasstorch "
                f"reads pretrained weights from there but does not fetch them itself; download them once with\n"
                f"    python -c \"import glasstorch; glasstorch.hub.load_state_dict_from_url('{self.url}')\"\n"
                f"(or copy the file there: torchvision's cache is the same directory), or set TORCH_HOME.")
        import glasstorch
        return glasstorch.load(path, map_location="cpu", weights_only=True)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


BUILTIN_MODELS = {}


def register_model(name=None):
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def list_models(module=None, include=None, exclude=None):
    """Names of the registered model builders, filtered by fnmatch patterns."""
    models = {k for k, v in BUILTIN_MODELS.items()
              if module is None or v.__module__.rsplit(".", 1)[0] == module.__name__}
    if include:
        models = set().union(*(fnmatch.filter(models, p) for p in ([include] if isinstance(include, str) else include)))
    for pattern in ([exclude] if isinstance(exclude, str) else exclude or []):
        models -= set(fnmatch.filter(models, pattern))
    return sorted(models)


def get_model_builder(name):
    try:
        return BUILTIN_MODELS[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown model {name.lower()}") from None


def get_model(name, **config):
    return get_model_builder(name)(**config)


def get_model_weights(name):
    builder = get_model_builder(name) if isinstance(name, str) else name
    return builder._weights_enum


def get_weight(name):
    """'ResNet18_Weights.IMAGENET1K_V1' -> that member."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    for builder in BUILTIN_MODELS.values():
        if builder._weights_enum.__name__ == enum_name:
            return builder._weights_enum[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be retrieved.")


def _ovewrite_named_param(kwargs, param, new_value):
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def model_builder(weights_enum, legacy_default):
    """Register a builder and accept torchvision's deprecated ``pretrained=True/False`` (with its warnings),
    turning it into ``weights=legacy_default`` / ``weights=None``; ``weights`` is verified against the enum."""
    def decorate(builder):
        @functools.wraps(builder)
        def build(*, weights=None, progress=True, **kwargs):
            if "pretrained" in kwargs:
                pretrained = kwargs.pop("pretrained")
                warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be removed in the "
                              "future, please use 'weights' instead.")
                weights = legacy_default if pretrained else None
                msg = (f"Arguments other than a weight enum or `None` for 'weights' are deprecated since 0.13 and "
                       f"may be removed in the future. The current behavior is equivalent to passing "
                       f"`weights={weights}`.")
                if pretrained:
                    msg += (f" You can also use `weights={type(weights).__name__}.DEFAULT` to get the most "
                            f"up-to-date weights.")
                warnings.warn(msg)
            return builder(weights=weights_enum.verify(weights), progress=progress, **kwargs)
        build._weights_enum = weights_enum
        return register_model()(build)
    return decorate


def load_weights(model, weights, progress):
    """Copy the pretrained `weights` into `model` (strict: every key must match)."""
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
