"""Where one op of bench_chain.py's chain spends its Python: bytecodes executed in each function's own
frame (exclusive) and calls, per op, counted with sys.settrace's opcode events over one chain step
(200 ops) after two warm-up steps; C functions called (sys.setprofile's c_call events) per op.
Bytecodes are not instructions -- a bytecode costs ~20 to several hundred machine instructions -- so
read it next to cachegrind/callgrind's counts (bench/README.md, stop 27 (s27-vc2)).

    PYTHONPATH=<tree> python bench/chain_profile.py nograd|fwd|fwdbwd [--top 40]
"""
import argparse
import collections
import gc
import os
import sys

import bench_chain


def profile(mode):
    step = bench_chain.chain_step(mode)
    step()
    step()
    ops, calls, c_calls = collections.Counter(), collections.Counter(), collections.Counter()

    def name(code):
        path = code.co_filename
        where = path[path.rindex("glasstorch"):] if "glasstorch" in path and os.sep in path else os.path.basename(path)
        return f"{where}:{code.co_qualname}"

    def tracer(frame, event, arg):
        if event == "call":
            frame.f_trace_opcodes = True
            calls[name(frame.f_code)] += 1
        elif event == "opcode":
            ops[name(frame.f_code)] += 1
        return tracer

    def c_tracer(frame, event, arg):
        if event == "c_call":
            c_calls[f"{getattr(arg, '__qualname__', arg)} <- {name(frame.f_code)}"] += 1

    gc.disable()    # (a collection would be counted against whichever frame it interrupts)
    sys.settrace(tracer)
    sys.setprofile(c_tracer)
    step()
    sys.settrace(None)
    sys.setprofile(None)
    gc.enable()
    return ops, calls, c_calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("nograd", "fwd", "fwdbwd"))
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    ops, calls, c_calls = profile(args.mode)
    n = 200
    print(f"chain {args.mode}: {sum(ops.values()) / n:.1f} bytecodes, {sum(calls.values()) / n:.2f} Python calls, "
          f"{sum(c_calls.values()) / n:.2f} C calls per op")
    print(" bytecodes  calls  function (per op, own frame)")
    for key, count in ops.most_common(args.top):
        print(f"{count / n:9.2f} {calls[key] / n:6.2f}  {key}")
    print("  C calls  called from")
    for key, count in c_calls.most_common(args.top // 2):
        print(f"{count / n:9.2f}  {key}")


if __name__ == "__main__":
    main()
