r"""The Transformer: ``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer``,
``TransformerDecoder`` and ``Transformer``, on ``MultiheadAttention`` (which torch keeps, and
glasstorch with it, in ``activation.py``; the function behind it, ``multi_head_attention_forward``,
is in ``nn/functional.py``).

An encoder layer is self-attention and a two-layer feed-forward net, each wrapped in a residual
connection and a LayerNorm, after (``norm_first=False``, the paper's) or before (``norm_first=True``)::

    post-norm:  x = norm1(x + SA(x));        x = norm2(x + FF(x))
    pre-norm:   x = x + SA(norm1(x));        x = x + FF(norm2(x))

and a decoder layer adds attention over the encoder's output (``memory``) between the two.

Masks follow torch: ``attn_mask`` ``(L, S)`` or ``(N*num_heads, L, S)``, ``key_padding_mask``
``(N, S)``; a boolean mask is True where attention is NOT allowed, a float mask is added to the
scores.

Example::

    >>> import glasstorch as torch
    >>> from glasstorch.nn.modules.transformer import TransformerEncoderLayer, TransformerEncoder
    >>> layer = TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
    >>> encoder = TransformerEncoder(layer, num_layers=2)
    >>> encoder(torch.randn(3, 5, 16)).shape
    torch.Size([3, 5, 16])
"""
import copy
import warnings

import glasstorch as torch
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


# ---- the Transformer --------------------------------------------------------------------------
def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The causal mask: -inf above the diagonal (position i may not look at j > i), 0 elsewhere."""
    return torch.triu(torch.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _get_clones(module, N):
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` if given, else whether ``mask`` is exactly the causal mask of that size."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = mask.size() == causal.size() and bool((mask == causal).all())
    return make_causal


class TransformerEncoderLayer(Module):
    r"""Self-attention and a feed-forward net, each in a residual connection with a LayerNorm.

    Args:
        d_model, nhead: model dimension and number of heads.
        dim_feedforward: hidden size of the feed-forward net. Default: 2048
        dropout: Default: 0.1.  activation: ``"relu"``, ``"gelu"`` or a callable. Default: relu
        layer_norm_eps: Default: 1e-5.  batch_first: ``(N, S, E)`` tensors. Default: ``False``
        norm_first: LayerNorm before each block rather than after. Default: ``False``
        bias: biases in the Linear and LayerNorm layers. Default: ``True``

    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``
    """
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask", F._none_or_dtype(src_mask),
                                               "src_mask", src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    r"""Self-attention over the target, attention over the encoder's ``memory``, and a feed-forward
    net, each in a residual connection with a LayerNorm (arguments as
    :class:`TransformerEncoderLayer`).

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``
    """
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` copies of ``encoder_layer`` (deep copies: the same initial
    parameters in every layer, as torch), then ``norm`` if given.

    ``enable_nested_tensor`` is accepted and, as in torch, decides whether inference with a
    ``src_key_padding_mask`` skips the padded positions: their outputs are then zeros (before
    ``norm``), exactly what torch's nested-tensor path returns.

    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)``
    """
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask", F._none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first_layer = self.layers[0]
        # torch's inference path runs padded batches as nested tensors, whose padded positions come back as zeros
        skip_padding = (getattr(self, "use_nested_tensor", False) and not first_layer.training and src.dim() == 3
                        and src_key_padding_mask is not None and mask is None
                        and not (torch.is_grad_enabled() and (src.requires_grad or any(
                            p.requires_grad for p in first_layer.parameters())))
                        and (not self.mask_check or _left_aligned(src_key_padding_mask)))
        seq_len = _get_seq_len(src, first_layer.self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if skip_padding:
            padded = src_key_padding_mask != 0  # -inf where padded
            if not first_layer.self_attn.batch_first:
                padded = padded.transpose(0, 1)
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _why_not_sparsity_fast_path(encoder_layer):
    """Why torch would not use nested tensors for this encoder layer ('' if it would)."""
    name = "encoder_layer"
    if not isinstance(encoder_layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if encoder_layer.norm_first:
        return f"{name}.norm_first was True"
    if not encoder_layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not encoder_layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if encoder_layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not encoder_layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if encoder_layer.norm1.eps != encoder_layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if encoder_layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


def _left_aligned(padding_mask):
    """Every row is real positions first, padding after (what the nested-tensor path requires)."""
    keep = (padding_mask == 0).long()
    return bool((keep[:, 1:] <= keep[:, :-1]).all())


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` copies of ``decoder_layer``, then ``norm`` if given.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False)``
    """
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    r"""The encoder-decoder Transformer: ``num_encoder_layers`` encoder layers and
    ``num_decoder_layers`` decoder layers, each stack followed by a LayerNorm.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
    memory_is_causal=False)``; ``Transformer.generate_square_subsequent_mask(sz)`` makes the causal
    ``tgt_mask``.
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory_kwargs),
                                              num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory_kwargs),
                                              num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        r"""The causal mask for a sequence of length ``sz``: ``-inf`` above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        """Xavier-uniform for every matrix (torch's initialisation of the whole model)."""
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
