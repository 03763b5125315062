r"""Variable-length batches for the recurrent layers: ``PackedSequence`` and its helpers
(``torch.nn.utils.rnn``'s packing half; ``nn/utils/rnn.py`` re-exports them).

A batch of sequences of different lengths is either *padded*, a ``(T, B, *)`` tensor whose
short sequences are filled up with a padding value, or *packed*: only the real steps, time step
after time step, the sequences sorted longest first::

    padded (T=3, B=3)        packed
    a1 b1 c1                 data        = a1 b1 c1 a2 b2 a3
    a2 b2 .                  batch_sizes = 3        2     1      (sequences still running at step t)
    a3 .  .

An RNN given a ``PackedSequence`` runs step ``t`` on ``batch_sizes[t]`` rows only, so padding
never enters the state, and each sequence's final state is the one after its own last step.
``sorted_indices`` remembers how an unsorted batch was reordered (``enforce_sorted=False``), and
``unsorted_indices`` undoes it.

Example::

    >>> import glasstorch as torch
    >>> from glasstorch.nn.utils._packing import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([torch.tensor([1, 2, 3]), torch.tensor([4, 5]), torch.tensor([6])])
    >>> p.data, p.batch_sizes
    (tensor([1, 4, 6, 2, 5, 3]), tensor([3, 2, 1]))
    >>> pad_packed_sequence(p, batch_first=True)[0]
    tensor([[1, 2, 3],
            [4, 5, 0],
            [6, 0, 0]])
"""
from collections import namedtuple
from collections.abc import Iterable

import glasstorch as torch
from glasstorch._tensor import Tensor
from glasstorch.ops.nn_rnn import _pack_padded_sequence, _pad_packed_sequence

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    __slots__ = ()


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    r"""Holds the packed ``data`` and the ``batch_sizes`` of every time step (a CPU int64 tensor);
    made by :func:`pack_padded_sequence` / :func:`pack_sequence`, accepted by every RNN module."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert ``data`` as ``Tensor.to`` does; the indices follow it to its device, ``batch_sizes``
        stays on the CPU. Returns ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move), _bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        return self.to("cuda", *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=torch.double)

    def float(self):
        return self.to(dtype=torch.float)

    def half(self):
        return self.to(dtype=torch.half)

    def long(self):
        return self.to(dtype=torch.long)

    def int(self):
        return self.to(dtype=torch.int)

    def short(self):
        return self.to(dtype=torch.short)

    def char(self):
        return self.to(dtype=torch.int8)

    def byte(self):
        return self.to(dtype=torch.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation (``None`` stays ``None``)."""
    if permutation is None:
        return None
    output = torch.empty_like(permutation)
    output[permutation] = torch.arange(permutation.numel(), device=permutation.device)
    return output


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    r"""Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences with the
    given ``lengths`` (a list or a CPU tensor). With ``enforce_sorted=False`` the batch is sorted
    by decreasing length first, and the order is kept in ``sorted_indices``."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=torch.int64)
    else:
        lengths = torch.as_tensor(lengths, dtype=torch.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = torch.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded_sequence(input, lengths.tolist(), batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Undo :func:`pack_padded_sequence`: returns ``(padded, lengths)``, the batch back in its
    original order, padded with ``padding_value`` to the longest length (or ``total_length``)."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded, lengths = _pad_packed_sequence(sequence.data, sequence.batch_sizes, batch_first, padding_value,
                                           max_seq_length)
    if sequence.unsorted_indices is not None:
        return padded.index_select(0 if batch_first else 1, sequence.unsorted_indices), \
            lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Stack sequences of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``),
    padding each to the longest ``T`` on its ``padding_side`` ('right' or 'left')."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    T = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        fill = s.new_full((T - s.size(0),) + tuple(s.shape[1:]), padding_value)
        padded.append(torch.cat([s, fill] if padding_side == "right" else [fill, s]))
    return torch.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""Split a padded batch back into a list of sequences of the given ``lengths``."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Pack a list of sequences ``(L_i, *)``: :func:`pad_sequence` then :func:`pack_padded_sequence`."""
    lengths = torch.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""The list of sequences a ``PackedSequence`` holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
