"""The bytecode sites CPython 3.11 left unspecialised in one training step of a bench_workloads row,
by how often they ran: an adaptive LOAD_ATTR/STORE_ATTR/LOAD_GLOBAL/CALL... that stayed generic costs
~100-370 machine instructions where its specialised form costs ~20 (a class attribute read at a site
that sees many classes; ndarray's .shape/.dtype/.ndim, C getsets 3.11 never specialises).

    python bench/unspecialised.py chain [--steps 30] [--top 40]      # this tree (or PYTHONPATH's first)

The row runs ``--steps`` warm-up steps (so that the code is quickened), then one more under
sys.settrace's opcode events, which count each site's executions; the sites are read with
``dis.get_instructions(code, adaptive=True)``. Only glasstorch's own code (and its generated code) is listed.
"""
import argparse
import collections
import dis
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("row")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args(argv)
    if sys.version_info[:2] != (3, 11):
        raise SystemExit("unspecialised.py reads CPython 3.11's adaptive instructions")
    sys.path.insert(0, HERE)
    import threadpoolctl
    threadpoolctl.threadpool_limits(1)
    import glasstorch
    import bench_workloads
    step = bench_workloads.make_step(glasstorch, args.row)
    for _ in range(args.steps):
        step()
    counts, codes = collections.Counter(), {}

    def tracer(frame, event, arg):
        if event == "call":
            frame.f_trace_opcodes = True
        elif event == "opcode":
            codes[id(frame.f_code)] = frame.f_code
            counts[(id(frame.f_code), frame.f_lasti)] += 1
        return tracer

    sys.settrace(tracer)
    step()
    sys.settrace(None)
    rows = []
    for key, code in codes.items():
        if "glasstorch" not in code.co_filename:
            continue
        for ins in dis.get_instructions(code, adaptive=True):
            n = counts.get((key, ins.offset), 0)
            if n and (ins.opname.endswith("_ADAPTIVE") or ins.opname in ("LOAD_ATTR", "STORE_ATTR", "LOAD_METHOD")):
                rows.append((n, code.co_qualname, os.path.basename(code.co_filename), ins.positions.lineno,
                             ins.opname, ins.argrepr))
    rows.sort(reverse=True)
    print(f"unspecialised sites run in one step of {args.row}: {sum(r[0] for r in rows)} executions")
    for n, name, where, line, opname, arg in rows[:args.top]:
        print(f"{n:6d}  {name[:40]:40s} {where}:{line} {opname} {arg}")


if __name__ == "__main__":
    main()
