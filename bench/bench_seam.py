"""What a live ``__torch_function__`` subclass instance costs the calls that do not involve it: the seam
is then on in every thread, and each public call looks at its arguments' types once (issue 10: "one
cheap check per call when nothing applies"). Process CPU time, min of 7 repeats of 20,000 calls, us
per call, of ``torch.add(a, b)`` on two plain 10-element float32 tensors:

* plain       -- no subclass instance alive;
* live        -- an instance of a logging subclass (torch's docs' ``LoggingTensor`` shape) alive;
* plain, kwarg / live, kwarg -- the same two, ``torch.add(a, b, alpha=2)`` (the keyword looked at too).

    python bench/bench_seam.py                  # this tree
    PYTHONPATH=<other tree> python bench/bench_seam.py
"""
import time
import timeit

import glasstorch as torch


class LoggingTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


def per_call(stmt, scope, number=20000, repeat=7):
    return min(timeit.repeat(stmt, globals=scope, number=number, repeat=repeat, timer=time.process_time)) / number * 1e6


def main():
    a, b = torch.ones(10), torch.ones(10)
    scope = {"torch": torch, "a": a, "b": b}
    plain = per_call("torch.add(a, b)", scope)
    plain_kwarg = per_call("torch.add(a, b, alpha=2)", scope)
    instance = torch.ones(3).as_subclass(LoggingTensor)
    live = per_call("torch.add(a, b)", scope)
    live_kwarg = per_call("torch.add(a, b, alpha=2)", scope)
    del instance
    print(f"{torch.__file__}\nplain {plain:.2f} us   live {live:.2f} us ({live / plain - 1:+.0%})   "
          f"plain, kwarg {plain_kwarg:.2f} us   live, kwarg {live_kwarg:.2f} us ({live_kwarg / plain_kwarg - 1:+.0%})")


if __name__ == "__main__":
    main()
