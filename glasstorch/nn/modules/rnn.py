r"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` over whole sequences, and the single-step
``RNNCell``, ``LSTMCell``, ``GRUCell``.

A recurrent layer carries a state ``h`` (and, for the LSTM, a cell ``c``) along the sequence::

    x_0      x_1      x_2               layer l+1 reads layer l's outputs h_t
     |        |        |                (with dropout between layers when training);
    cell --> cell --> cell --> h_n       a bidirectional layer runs a second cell from the
     |        |        |                 end to the start, and concatenates both outputs.
    h_0      h_1      h_2   (output)

Parameters are named and shaped as torch's, so state_dicts load either way: per layer ``l`` and
direction (suffix ``_reverse``), ``weight_ih_l{l}`` ``(G*hidden_size, input)``,
``weight_hh_l{l}`` ``(G*hidden_size, hidden)``, ``bias_ih_l{l}``, ``bias_hh_l{l}`` ``(G*hidden_size)``
and, for an LSTM with ``proj_size``, ``weight_hr_l{l}`` ``(proj_size, hidden_size)``; ``G`` stacks
the gates in torch's order: 4 for the LSTM (i, f, g, o), 3 for the GRU (r, z, n), 1 for the RNN.

Each layer and direction runs as one fused op (``ops/nn_rnn.py``: one matrix product for the
inputs of all steps, one per step for the state, and a hand-written backpropagation through
time); the cells are compositions of ordinary ops.

Example::

    >>> import glasstorch as torch
    >>> from glasstorch.nn.modules.rnn import LSTM
    >>> lstm = LSTM(10, 20, num_layers=2)
    >>> output, (h_n, c_n) = lstm(torch.randn(5, 3, 10))     # (seq, batch, feature)
    >>> output.shape, h_n.shape, c_n.shape
    (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]), torch.Size([2, 3, 20]))
    >>> output.grad_fn.name()                               # one node per layer and direction
    'MkldnnRnnLayerBackward0'
"""
import math
import numbers
import warnings

import glasstorch as torch
from glasstorch.ops import nn_rnn
from .. import init
from ..parameter import Parameter
from ..utils._packing import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = nn_rnn.GATES  # gate blocks stacked in the weights, per mode
_NETWORKS = {"LSTM": nn_rnn.lstm, "GRU": nn_rnn.gru, "RNN_TANH": nn_rnn.rnn_tanh, "RNN_RELU": nn_rnn.rnn_relu}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    r"""What RNN, LSTM and GRU share: the parameters, the checks and the layer loop.

    ``mode`` is one of ``'LSTM'``, ``'GRU'``, ``'RNN_TANH'``, ``'RNN_RELU'``. See :class:`LSTM` for
    the arguments.
    """
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)

        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []          # per (layer, direction): the names of its parameters
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(torch.empty(shape, **factory_kwargs)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        """The parameters in torch's flat order (read fresh, so reassigned or converted ones count)."""
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Make the weights one contiguous block for cuDNN. A no-op here, as it is in torch on the CPU."""

    def reset_parameters(self):
        r"""Every weight and bias from :math:`\mathcal{U}(-1/\sqrt{hidden}, 1/\sqrt{hidden})`."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks, with torch's messages ------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.proj_size if self.proj_size > 0 else
                self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def _input_dims_message(self, input):
        return f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead"

    # -- forward: torch's, step by step, so a TorchFunctionMode sees the same calls ---------------
    def forward(self, input, hx=None):
        """``input``: ``(L, N, H_in)`` (``(N, L, H_in)`` if ``batch_first``), ``(L, H_in)`` unbatched,
        or a ``PackedSequence``; ``hx``: the initial state, zeros if omitted. Returns ``(output, h_n)``
        (:class:`LSTM` has its own, with the cell state)."""
        orig_input = input
        is_batched = batch_dim = None                     # (None: a packed input)
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = batch_sizes[0]
            if hx is None:
                hx = self._zeros(input, max_batch_size, self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = None
            is_batched, batch_dim, input = self._batched(input)
            if not is_batched:
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                           "tensor")
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = self._zeros(input, max_batch_size, self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        return self._run(input, batch_sizes, hx, sorted_indices, unsorted_indices,
                         is_batched, batch_dim)

    def _batched(self, input):
        """(is_batched, batch_dim, input with a batch dim) of a padded input, checked as torch does."""
        if input.dim() not in (2, 3):
            raise ValueError(self._input_dims_message(input))
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return is_batched, batch_dim, input

    def _run(self, input, batch_sizes, hx, sorted_indices, unsorted_indices, is_batched, batch_dim):
        """The network on the checked input, and its results as the input came: packed again
        (``is_batched`` None), or without the batch dim an unbatched input was given."""
        output, hidden = self._network(input, batch_sizes, hx)
        if is_batched is None:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) else hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)

    def _zeros(self, input, max_batch_size, size):
        num_directions = 2 if self.bidirectional else 1
        return torch.zeros(self.num_layers * num_directions, max_batch_size, size, dtype=input.dtype,
                           device=input.device)

    def _network(self, input, batch_sizes, hx):
        """torch.lstm / gru / rnn_tanh / rnn_relu (torch's _VF calls, with its arguments)."""
        function = _NETWORKS[self.mode]
        if batch_sizes is None:
            result = function(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                              self.bidirectional, self.batch_first)
        else:
            result = function(input, batch_sizes, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                              self.training, self.bidirectional)
        return result[0], result[1:] if self.mode == "LSTM" else result[1]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)


class RNN(RNNBase):
    r"""RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)

    An Elman RNN: :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})`
    (``nonlinearity='relu'`` for ReLU). Returns ``(output, h_n)``; see :class:`LSTM` for shapes.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def _input_dims_message(self, input):
        return f"RNN: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"


class LSTM(RNNBase):
    r"""LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)

    A multi-layer long short-term memory RNN. Each layer computes, for every step:

    .. math::
        \begin{array}{ll}
        i_t = \sigma(W_{ii} x_t + b_{ii} + W_{hi} h_{t-1} + b_{hi}) &
        f_t = \sigma(W_{if} x_t + b_{if} + W_{hf} h_{t-1} + b_{hf}) \\
        g_t = \tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg}) &
        o_t = \sigma(W_{io} x_t + b_{io} + W_{ho} h_{t-1} + b_{ho}) \\
        c_t = f_t \odot c_{t-1} + i_t \odot g_t & h_t = o_t \odot \tanh(c_t)
        \end{array}

    and, with ``proj_size > 0``, :math:`h_t = W_{hr} h_t`.

    Args:
        input_size, hidden_size: features of ``x`` and of ``h``/``c``.
        num_layers: stacked layers, each reading the outputs of the one below. Default: 1
        bias: use ``b_ih`` and ``b_hh``. Default: ``True``
        batch_first: input and output as ``(batch, seq, feature)``. Default: ``False``
        dropout: dropout on the outputs of every layer but the last, in training. Default: 0
        bidirectional: also run each layer backwards and concatenate. Default: ``False``
        proj_size: project ``h`` to this size. Default: 0 (none)

    Shapes (``D = 2`` if bidirectional else 1, ``H_out = proj_size or hidden_size``):
        input ``(L, N, H_in)``, ``h_0`` ``(D*num_layers, N, H_out)``, ``c_0``
        ``(D*num_layers, N, hidden_size)`` -> output ``(L, N, D*H_out)``, ``h_n`` and ``c_n`` like
        ``h_0`` and ``c_0``. Unbatched inputs drop ``N``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        """As :meth:`RNNBase.forward`, with the state ``(h, c)``: returns ``(output, (h_n, c_n))``.
        (A packed input's given state is not checked, as in torch.)"""
        orig_input = input
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        batch_sizes = is_batched = batch_dim = None       # (is_batched None: a packed input)
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = batch_sizes[0]
            if hx is None:
                hx = (self._zeros(input, max_batch_size, real_hidden_size),
                      self._zeros(input, max_batch_size, self.hidden_size))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            is_batched, batch_dim, input = self._batched(input)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = (self._zeros(input, max_batch_size, real_hidden_size),
                      self._zeros(input, max_batch_size, self.hidden_size))
                self.check_forward_args(input, hx, batch_sizes)
            else:
                self._check_state_dims(hx, is_batched)
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                self.check_forward_args(input, hx, batch_sizes)
                hx = self.permute_hidden(hx, sorted_indices)
        return self._run(input, batch_sizes, hx, sorted_indices, unsorted_indices,
                         is_batched, batch_dim)

    def _check_state_dims(self, hx, is_batched):
        want = 3 if is_batched else 2
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")


class GRU(RNNBase):
    r"""GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)

    A multi-layer gated recurrent unit RNN:

    .. math::
        \begin{array}{ll}
        r_t = \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr}) &
        z_t = \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}) \\
        n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})) &
        h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}
        \end{array}

    Returns ``(output, h_n)``; see :class:`LSTM` for the arguments and shapes.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- cells ----------------------------------------------------------------------------------
class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` ``(chunks*hidden, input)``, ``weight_hh``
    ``(chunks*hidden, hidden)``, ``bias_ih``/``bias_hh`` ``(chunks*hidden)`` and their checks."""
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(torch.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(torch.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(torch.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(torch.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, states):
        """Checks as torch's; an unbatched (1-D) input and its states get a batch dim of 1.
        ``states``: the state tensors given (or None). Returns (input, states, is_batched)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if states is not None:
            for i, s in enumerate(states):
                if s.dim() not in (1, 2):
                    what = "hidden" if len(states) == 1 else f"hx[{i}]"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if states is None:
            zeros = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            states = (zeros,) * (2 if isinstance(self, LSTMCell) else 1)
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        for i, s in enumerate(states):
            if s.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, states, is_batched

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh


class RNNCell(RNNCellBase):
    r"""An Elman RNN cell: :math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})`
    (``nonlinearity='relu'`` for ReLU). ``forward(input, hx=None) -> h'``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (hx,), is_batched = self._prepare(input, None if hx is None else (hx,))
        if self.nonlinearity == "tanh":
            ret = nn_rnn.rnn_tanh_cell(input, hx, *self._weights())
        elif self.nonlinearity == "relu":
            ret = nn_rnn.rnn_relu_cell(input, hx, *self._weights())
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""An LSTM cell (the step of :class:`LSTM`): ``forward(input, (h, c)=None) -> (h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare(input, None if hx is None else tuple(hx))
        h, c = nn_rnn.lstm_cell(input, hx, *self._weights())
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    r"""A GRU cell (the step of :class:`GRU`): ``forward(input, hx=None) -> h'``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (hx,), is_batched = self._prepare(input, None if hx is None else (hx,))
        ret = nn_rnn.gru_cell(input, hx, *self._weights())
        return ret if is_batched else ret.squeeze(0)
