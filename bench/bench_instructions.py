"""Machine instructions per training step of a bench_workloads row, counted by valgrind's cachegrind:
(the count with N steps - the count with 0 steps) / N, after 5 warm-up steps in both, so that start-up
and imports cancel out. Deterministic enough to read a 1% change where timings on a shared machine are
not (the same count moves by ~+-40 k between processes; BLAS-heavy rows -- mlp -- by millions).

    python bench/bench_instructions.py chain                  # this tree, 20 steps
    python bench/bench_instructions.py chain-nograd --steps 60 --tree /tmp/main-archive

One BLAS thread, PYTHONHASHSEED=0. Needs valgrind on PATH. Note that valgrind hides AVX-512 from the
program (OpenBLAS then picks its Haswell kernels), and counts each byte of a `rep stosb` memset as an
instruction: read BLAS-heavy rows' counts with that in mind.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _child(tree, row, steps):
    sys.path.insert(0, tree)
    sys.path.insert(0, HERE)
    import threadpoolctl
    threadpoolctl.threadpool_limits(1)
    import glasstorch
    import bench_workloads
    step = bench_workloads.make_step(glasstorch, row)
    for _ in range(5 + steps):
        step()


def _count(tree, row, steps, env):
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={d}/out",
                        f"--log-file={log}", sys.executable, __file__, "--child", tree, row, str(steps)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        text = open(log).read()
    m = re.search(r"I\s+refs:\s+([\d,]+)", text)
    if m is None:
        raise SystemExit(f"no instruction count in valgrind's log:\n{text[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main(argv=None):
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        return _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("row", help="a bench_workloads row: chain, chain-nograd, mlp, lenet, lstm, transformer")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tree", default=os.path.dirname(HERE), help="the glasstorch tree to count (default: this one)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_instructions.py needs valgrind (e.g. apt install valgrind)")
    tree = os.path.abspath(args.tree)
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # (cached bytecode: the 0-step run must not compile more)
    subprocess.run([sys.executable, __file__, "--child", tree, args.row, "1"], env=env, check=True)  # warm the caches
    base = _count(tree, args.row, 0, env)
    full = _count(tree, args.row, args.steps, env)
    print(f"{args.row}: {(full - base) / args.steps / 1e6:.4f} M instructions a step "
          f"({args.steps} steps, tree {tree})")


if __name__ == "__main__":
    main()
