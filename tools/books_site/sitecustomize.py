"""Put on ``PYTHONPATH`` by tools/run_books.py for its glasstorch runs: a Python process that a notebook
starts (syne-tune's trial workers run ``sys.executable`` on a script of their own) is bound to
glasstorch as the notebook is, so ``import torch`` in it gives glasstorch, not the real torch that the
books' environment also holds. The runner's worker sets ``GLASSTORCH_BOOKS_BIND`` for its children only
(the worker itself binds with ``%load_ext glasstorch``, after its own start)."""
import os

if os.environ.get("GLASSTORCH_BOOKS_BIND") == "1":
    import glasstorch
    glasstorch.as_torch()
