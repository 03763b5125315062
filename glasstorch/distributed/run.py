"""The launcher: ``python -m glasstorch.distributed.run`` takes torchrun's flags and runs on mpiexec.

    python -m glasstorch.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m glasstorch.distributed.run --nproc-per-node 4 --hostfile hosts train.py   # several machines, one mpiexec
    python -m glasstorch.distributed.run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 \\
        --nproc-per-node 4 train.py                                                      # torchrun's way: one launcher per machine

Each rank finds torchrun's environment (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``)
before the script runs, so ``init_process_group()`` and ``int(os.environ["LOCAL_RANK"])`` work
as under torchrun.

How the processes start:

- one machine, or ``--hostfile`` (MPI's way: one ``mpiexec`` reaches every host over ssh): a
  single ``mpiexec`` starts every rank; each runs ``_rank_main`` (MPI's rank -> torchrun's variables),
  then the script;
- ``--nnodes N --node-rank R`` without a hostfile (torchrun's way: one launcher per machine, which
  can't share one mpiexec): this launcher starts its machine's ranks itself, and they meet at
  ``--master-addr:--master-port`` (global rank 0 serves the rendezvous), as under
  ``torch.multiprocessing.spawn``.

If a rank fails, the others are stopped (mpiexec does it; in the second way, this launcher does)
and a summary in torchrun's shape names the first failure: rank, exit code, traceback. The
launcher then exits with status 1. There is no elastic restart (``--max-restarts`` must be 0).
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

__all__ = ["main", "get_args_parser", "parse_args"]


def _flag(parser, name, **kwargs):
    """torchrun accepts ``--nproc-per-node`` and ``--nproc_per_node`` alike."""
    names = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
    parser.add_argument(*names, **kwargs)


def get_args_parser():
    parser = argparse.ArgumentParser(prog="python -m glasstorch.distributed.run",
                                     description="Start a training script on several processes (torchrun's flags, "
                                                 "on mpiexec).")
    _flag(parser, "nnodes", type=str, default="1", help="number of machines (an integer; no elastic ranges)")
    _flag(parser, "nproc-per-node", type=str, default="1",
          help="processes per machine: an integer, or 'cpu'/'auto' (one per CPU core)")
    _flag(parser, "node-rank", type=int, default=0, help="this machine's rank, with --nnodes")
    _flag(parser, "master-addr", type=str, default="127.0.0.1", help="address of the machine of rank 0")
    _flag(parser, "master-port", type=int, default=None, help="a free port on that machine (default 29500)")
    _flag(parser, "rdzv-endpoint", type=str, default="", help="host:port, an alternative to --master-addr/-port")
    _flag(parser, "rdzv-backend", type=str, default="static", help="accepted for torchrun compatibility")
    _flag(parser, "rdzv-id", type=str, default="none", help="the run's id (TORCHELASTIC_RUN_ID)")
    parser.add_argument("--standalone", action="store_true",
                        help="one machine, on a free port chosen here (ignores --master-addr/-port)")
    parser.add_argument("--hostfile", type=str, default=None,
                        help="an MPI hostfile (one host per line): one mpiexec starts the ranks on every host")
    _flag(parser, "max-restarts", type=int, default=0, help="must be 0: no elastic restarts")
    parser.add_argument("--mpiexec", type=str, default=None, help="the mpiexec program (default: the mpich wheel's)")
    parser.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    _flag(parser, "no-python", action="store_true", help="the script is a program, not a Python file")
    parser.add_argument("training_script", type=str, help="the script (or module, with -m) to run on every rank")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nproc(value):
    if value in ("cpu", "auto", "gpu"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"Unsupported nproc_per_node value: {value}") from None
    if n < 1:
        raise ValueError(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _nnodes(value):
    if ":" in value:
        low, high = value.split(":")
        if low != high:
            raise ValueError(f"--nnodes {value}: elastic ranges are not supported (glasstorch has no elastic "
                             f"agent); give a number")
        value = low
    return int(value)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _find_mpiexec(explicit):
    if explicit:
        return explicit
    beside_python = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside_python if os.access(beside_python, os.X_OK) else shutil.which("mpiexec")
    if found is None:
        raise RuntimeError('mpiexec was not found. Install MPI with: pip install "glasstorch[distributed]" '
                           '(the mpich wheel brings mpiexec), or pass --mpiexec PATH')
    return found


def _hosts(hostfile):
    hosts = []
    with open(hostfile) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                hosts.append(line.split(":")[0].split()[0])
    if not hosts:
        raise ValueError(f"--hostfile {hostfile} names no host")
    return hosts


def _script_command(args):
    if args.no_python:
        return [args.training_script] + args.training_script_args
    target = ["-m", args.training_script] if args.module else [args.training_script]
    return target + args.training_script_args


def _base_environment(args, master_addr, master_port, error_dir, run_id):
    env = dict(os.environ)
    env.update(MASTER_ADDR=master_addr, MASTER_PORT=str(master_port), TORCHELASTIC_RUN_ID=run_id,
               GLASSTORCH_ERROR_DIR=error_dir, TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0")
    if args.no_python:
        env["GLASSTORCH_NO_PYTHON"] = "1"
    return env


def main(argv=None):
    args = parse_args(argv)
    if args.max_restarts != 0:
        raise SystemExit("--max-restarts: glasstorch.distributed.run has no elastic agent; only 0 is supported")
    nproc = _nproc(args.nproc_per_node)
    nnodes = _nnodes(args.nnodes)
    master_addr, master_port = args.master_addr, 29500 if args.master_port is None else args.master_port
    if args.rdzv_endpoint:
        host, _, port = args.rdzv_endpoint.rpartition(":")
        master_addr, master_port = (host or args.rdzv_endpoint), int(port or master_port)
    if args.standalone:
        master_addr, master_port, nnodes = "127.0.0.1", _free_port(), 1
    # torchrun's TORCHELASTIC_RUN_ID: a fresh one for a run on one machine left to pick its rendezvous,
    # else --rdzv-id as given ("none" by default), the same on every machine's launcher
    alone = args.standalone or (nnodes == 1 and not args.rdzv_endpoint and args.master_port is None)
    run_id = str(uuid.uuid4()) if alone else args.rdzv_id
    error_dir = tempfile.mkdtemp(prefix="glasstorch-run-")
    env = _base_environment(args, master_addr, master_port, error_dir, run_id)
    try:
        if args.hostfile or nnodes == 1:
            code = _run_mpiexec(args, nproc, env)
        else:
            if not 0 <= args.node_rank < nnodes:
                raise SystemExit(f"--node-rank {args.node_rank} must be in [0, {nnodes - 1}]")
            code = _run_processes(args, nproc, nnodes, env)
        if code != 0:
            _report(args.training_script, error_dir, code)
            return 1
        return 0
    finally:
        shutil.rmtree(error_dir, ignore_errors=True)


def _run_mpiexec(args, nproc, env):
    """One mpiexec for every rank (on this machine, or on the hostfile's)."""
    command = [_find_mpiexec(args.mpiexec)]
    if args.hostfile:
        hosts = _hosts(args.hostfile)
        command += ["-f", args.hostfile, "-ppn", str(nproc), "-n", str(nproc * len(hosts))]
        if args.master_addr == "127.0.0.1" and not args.rdzv_endpoint:
            env["MASTER_ADDR"] = hosts[0]
    else:
        command += ["-n", str(nproc)]
    command += [sys.executable, "-m", "glasstorch.distributed._rank_main"] + _script_command(args)
    return _wait_for([subprocess.Popen(command, env=env)])


def _run_processes(args, nproc, nnodes, env):
    """This machine's ranks, started here; they meet at MASTER_ADDR:MASTER_PORT."""
    world = nproc * nnodes
    processes = []
    for local in range(nproc):
        rank = args.node_rank * nproc + local
        rank_env = dict(env, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                        LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(args.node_rank), ROLE_RANK=str(rank),
                        ROLE_WORLD_SIZE=str(world), GROUP_WORLD_SIZE=str(nnodes), ROLE_NAME="default")
        processes.append(subprocess.Popen([sys.executable, "-m", "glasstorch.distributed._rank_main"]
                                          + _script_command(args), env=rank_env))
    return _wait_for(processes)


def _wait_for(processes, grace=5.0):
    """Wait for every process; at the first failure stop the others (SIGTERM, then SIGKILL)."""
    try:
        while True:
            codes = [p.poll() for p in processes]
            failed = [c for c in codes if c not in (None, 0)]
            if failed:
                _stop(processes, grace)
                return failed[0]
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.05)
    except KeyboardInterrupt:
        _stop(processes, grace)
        return 130


def _stop(processes, grace):
    for p in processes:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    end = time.monotonic() + grace
    for p in processes:
        try:
            p.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _report(script, error_dir, code):
    """torchrun's failure summary: the first failure (root cause), then the others."""
    records = []
    for name in os.listdir(error_dir):
        try:
            with open(os.path.join(error_dir, name)) as f:
                records.append(json.load(f))
        except (OSError, ValueError):
            pass
    records.sort(key=lambda r: r["time"])
    bar, thin = "=" * 60, "-" * 60
    lines = [bar, f"{script} FAILED", thin, "Failures:"]
    others = records[1:]
    lines += [_record_text(r, i + 1) for i, r in enumerate(others)] or ["  <NO_OTHER_FAILURES>"]
    lines += [thin, "Root Cause (first observed failure):"]
    if records:
        lines.append(_record_text(records[0], 0))
    else:
        lines.append(f"[0]:\n  exitcode  : {code}\n  error     : no rank left a traceback (killed by a signal, or "
                     f"a crash in native code): see mpiexec's report above")
    lines.append(bar)
    print("\n".join(lines), file=sys.stderr, flush=True)


def _record_text(r, i):
    stamp = time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(r["time"]))
    trace = "\n    ".join(r["traceback"].rstrip().splitlines())
    return (f"[{i}]:\n  time      : {stamp}\n  host      : {r['host']}\n  rank      : {r['rank']} (local_rank: "
            f"{r['local_rank']})\n  exitcode  : 1 (pid: {r['pid']})\n  error     : {r['error']}\n"
            f"  traceback :\n    {trace}")


if __name__ == "__main__":
    sys.exit(main())
