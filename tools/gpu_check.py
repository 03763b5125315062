"""The one-shot GPU check of issue 15: everything glasstorch's CUDA path must show on a real GPU, in
one run, with one summary at the end.

    python tools/gpu_check.py                  # install CuPy and torch, test, benchmark, summarise
    python tools/gpu_check.py --no-install     # use what the current environment has
    tools/gpu_check.sh                         # the same (a shell wrapper)

Steps (each one's outcome goes into the summary; any failure makes the exit status non-zero):

1. Look for a GPU (``nvidia-smi -L``; without it, ``/dev/nvidia0``). None: say so and exit with
   status 2 -- CUDA is then UNVERIFIED, and the script never reports a pass.
2. Install ``cupy-cuda12x`` and torch (``torch==2.13.0``, a CUDA build: pass its index with
   ``--torch-index-url`` where the default index gives a CPU-only wheel) and glasstorch's test extra,
   into the running interpreter's environment.
3. Check that both see the GPU: ``glasstorch.cuda.is_available()`` and ``torch.cuda.is_available()``.
4. The op registry on CUDA: ``pytest tests/test_ops.py --device cuda`` (every op's values, gradients
   and double gradients, glasstorch on the GPU against torch on the CPU), then the device tests that
   run only with a GPU (tests/test_devices.py, tests/test_meta.py's device rules with ``cuda``,
   tests/test_device_rule.py's CPU/CUDA mixing errors). ``pytest --device fakecuda`` runs the same
   tests without a GPU on a NumPy stand-in for CuPy (tests/_fake_cupy.py): it finds host/device
   mix-ups, and is no GPU check -- this script is.
5. The GPU benchmarks: ``bench/bench_workloads.py --device cuda`` (the small-op chain, the MLP,
   LeNet and Transformer-layer steps against torch CUDA eager on the same GPU; goal: within 1.5x
   for the MLP and the Transformer layer).

It is sized for one short loan of a GPU machine: the steps' time limits add up to 8 minutes (the op
registry 270 s, the device tests 90 s, the benchmarks 120 s, the probe 30 s), and the tests run on
every core with pytest-xdist where it is installed (a fresh machine compiles each of CuPy's kernels
once: in parallel). A step that runs out of time is reported as such, and the check fails.

On a machine that reaches no package index (a lent GPU machine here: it has torch, CuPy and pytest
already), pass ``--no-install``: pip would spend the budget retrying. The tests compare with the torch
that is there; with another version than the one they pin (torch 2.13.0) the summary says so, as a
difference found may then be torch's.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_ROWS = "chain,mlp,lenet,transformer"
GOALS = {"mlp": 1.5, "transformer": 1.5}


def find_gpu():
    """A line naming the GPU(s), or None when this machine has none."""
    if shutil.which("nvidia-smi"):
        run = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
        lines = [line for line in run.stdout.splitlines() if line.startswith("GPU ")]
        if run.returncode == 0 and lines:
            return "; ".join(lines)
        return None
    return "/dev/nvidia0 (no nvidia-smi)" if os.path.exists("/dev/nvidia0") else None


def _run(step, command, log, timeout):
    """Run ``command`` in the repository, echo its output, keep it in ``log``; the return code."""
    print(f"\n== {step}: {' '.join(command)}", flush=True)
    start = time.monotonic()
    try:
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        out, rc = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + f"\n(timed out after {timeout} s)", 124
    print(out[-6000:], flush=True)
    log[step] = (rc, out, time.monotonic() - start)
    return rc


def _has_xdist(python):
    """Whether ``python`` has pytest-xdist (``-n``): the tests then run on every core."""
    return subprocess.run([python, "-c", "import xdist"], capture_output=True).returncode == 0


def _pytest_line(out):
    """pytest's last line ("1479 passed, 14 xfailed in 497.44s"), or what went wrong."""
    lines = [line.strip("= ") for line in out.splitlines() if re.search(r"\b(passed|failed|error)\b", line)]
    return lines[-1] if lines else out.strip().splitlines()[-1] if out.strip() else "(no output)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-install", action="store_true", help="use the packages the environment has")
    ap.add_argument("--torch-index-url", default=None,
                    help="pip index of torch's CUDA wheels (e.g. https://download.pytorch.org/whl/cu126)")
    ap.add_argument("--reps", type=int, default=11, help="benchmark repetitions")
    ap.add_argument("--test-timeout", type=int, default=270, help="seconds for the op registry on CUDA")
    ap.add_argument("--workers", default=None,
                    help="pytest-xdist workers for the tests (default: every core, when pytest-xdist is installed)")
    args = ap.parse_args()
    python = sys.executable
    summary = []

    gpu = find_gpu()
    if gpu is None:
        print("\n== SUMMARY\nNO GPU FOUND on this machine: nothing was run. CUDA is UNVERIFIED "
              "(this check passes only on a machine with an NVIDIA GPU).")
        return 2
    summary.append(f"GPU: {gpu}")

    log = {}
    if not args.no_install:
        torch_cmd = [python, "-m", "pip", "install", "-q", "torch==2.13.0"]
        if args.torch_index_url:
            torch_cmd += ["--index-url", args.torch_index_url]
        for step, command in (("install torch", torch_cmd),
                              ("install cupy", [python, "-m", "pip", "install", "-q", "cupy-cuda12x"]),
                              ("install glasstorch", [python, "-m", "pip", "install", "-q", "-e", ".[test]"])):
            if _run(step, command, log, timeout=1800) != 0:
                summary.append(f"{step}: FAILED (see above)")

    probe = ("import glasstorch, torch; print('glasstorch.cuda', glasstorch.cuda.is_available(), "
             "glasstorch.cuda.device_count()); print('torch.cuda', torch.cuda.is_available(), torch.__version__); "
             "import cupy; print('cupy', cupy.__version__)")
    _run("probe", [python, "-c", probe], log, timeout=30)
    rc, out, _ = log["probe"]
    ours_ok = "glasstorch.cuda True" in out
    torch_ok = "torch.cuda True" in out
    summary.append("glasstorch sees the GPU (CuPy): " + ("yes" if ours_ok else "NO"))
    summary.append("torch sees the GPU: " + ("yes" if torch_ok else "NO (a CPU-only torch: benchmarks cannot run)"))
    version = re.search(r"torch\.cuda \w+ (\S+)", out)
    if version and not version.group(1).startswith("2.13.0"):
        summary.append(f"NOTE: the oracle is torch {version.group(1)}, not the 2.13.0 the tests pin: a difference "
                       f"reported may be torch's (messages, new behaviour), not CUDA's")
    workers = args.workers or (str(os.cpu_count() or 1) if _has_xdist(python) else None)
    parallel = ["-n", workers] if workers and workers != "0" else []

    failed = rc != 0 or not ours_ok
    if ours_ok:
        rc = _run("op registry on cuda", [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *parallel,
                                          "tests/test_ops.py::test_op", "--device", "cuda"], log, timeout=args.test_timeout)
        failed |= rc != 0
        summary.append(f"op registry on cuda (values, grads vs torch CPU): {'ok' if rc == 0 else 'FAILED'} -- "
                       f"{_pytest_line(log['op registry on cuda'][1])}")
        rc = _run("device tests", [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *parallel,
                                   "tests/test_devices.py", "tests/test_meta.py", "tests/test_device_rule.py",
                                   "--device", "cuda"], log, timeout=90)
        failed |= rc != 0
        summary.append(f"device tests (tests/test_devices.py, tests/test_meta.py, tests/test_device_rule.py): {'ok' if rc == 0 else 'FAILED'}"
                       f" -- {_pytest_line(log['device tests'][1])}")
    else:
        summary.append("CUDA tests: NOT RUN (glasstorch finds no GPU)")

    if ours_ok and torch_ok:
        rc = _run("benchmarks", [python, "bench/bench_workloads.py", "--device", "cuda", "--rows", BENCH_ROWS,
                                 "--reps", str(args.reps)], log, timeout=120)
        failed |= rc != 0
        table = [line for line in log["benchmarks"][1].splitlines() if line.startswith("|")]
        summary.append("GPU benchmarks (glasstorch / torch CUDA eager, same GPU):" if rc == 0 else
                       "GPU benchmarks: FAILED (see above)")
        summary.extend("  " + line for line in table)
        for line in table:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells and cells[0] in GOALS:
                ratio = float(cells[3].rstrip("x"))
                summary.append(f"  {cells[0]}: {ratio:.2f}x, goal <= {GOALS[cells[0]]}x: "
                               f"{'met' if ratio <= GOALS[cells[0]] else 'NOT MET'}")
    else:
        failed = True
        summary.append("GPU benchmarks: NOT RUN (both frameworks must see the GPU)")

    print("\n== SUMMARY")
    print("\n".join(summary))
    print("CUDA check: " + ("FAILED or incomplete" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
