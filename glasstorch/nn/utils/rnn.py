r"""torch.nn.utils.rnn: padding and packing batches of variable-length sequences.

    >>> import glasstorch as torch
    >>> from glasstorch.nn.utils.rnn import pad_sequence
    >>> pad_sequence([torch.ones(3), torch.ones(1)], batch_first=True)
    tensor([[1., 1., 1.],
            [1., 0., 0.]])

The implementations live with the recurrent layers' packing code (``_packing.py``).
"""
from ._packing import (PackedSequence, invert_permutation, pack_padded_sequence, pad_packed_sequence,  # noqa: F401
                       pad_sequence, unpad_sequence, pack_sequence, unpack_sequence)

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]
