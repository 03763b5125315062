"""torch._prims_common: what op implementations share (here, the ``out=`` rules: ``wrappers.py``)."""
