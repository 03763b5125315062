"""torch.distributed on MPI, DistributedDataParallel, the launcher and torch.multiprocessing.spawn.

The multi-process tests start real ranks (2 and 3, on the 2 cores CI has) through every launch
path: ``python -m glasstorch.distributed.run`` (mpiexec, and one launcher per node), plain
``mpiexec``, ``multiprocessing.spawn`` with an ``env://`` rendezvous, and ranks started apart with
``env://`` or ``tcp://``. Starting ranks is what costs time here (seconds per world on 2 busy
cores), so one world runs every collective and DDP check of a launch path (``suite.py``) and each
fault gets the one world it breaks. The rank-side code is in ``tests/distributed_scripts/``; this
process never loads MPI. Every run has a hard time limit (its whole process group is killed), so a
hang fails the test instead of the CI run.
"""
import ast
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import glasstorch
import glasstorch.multiprocessing as gmp

SCRIPTS = Path(__file__).parent / "distributed_scripts"
needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                               reason='needs mpi4py and MPICH: pip install "glasstorch[distributed]"')


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent), **{k: str(v) for k, v in extra.items()})
    env.pop("GLASSTORCH_SEATBELT", None)
    return env


def _run(args, limit, env=None, cwd=SCRIPTS, nothing_left=False):
    """Run a command in its own process group; kill the whole group past ``limit`` seconds. With
    ``nothing_left``, every process it started must have ended soon after it did."""
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=cwd, env=env or _env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(map(str, args))} still ran after {limit}s (a hang)\nstdout:\n{out}\nstderr:\n{err[-3000:]}")
    elapsed = time.monotonic() - start
    if nothing_left:
        try:
            _assert_nothing_left([proc])
        finally:
            _kill_all([proc])
    return proc.returncode, out, err, elapsed


def _launch(nproc, script, *args, limit=90, env=None):
    return _run([sys.executable, "-m", "glasstorch.distributed.run", "--nproc-per-node", str(nproc), script, *args],
                limit, env)


def _ranks_apart(script, args, world_size, limit, env_extra=None):
    """Each rank as its own process (no launcher, no parent): env:// rendezvous at a free port."""
    port = _free_port()
    procs = []
    for r in range(world_size):
        env = _env(RANK=r, WORLD_SIZE=world_size, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **(env_extra or {}))
        procs.append(subprocess.Popen([sys.executable, script, *args], cwd=SCRIPTS, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, start_new_session=True))
    return procs


def _finish(proc, limit):
    try:
        out, err = proc.communicate(timeout=limit)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        return None, "", ""


def _kill_all(procs):
    """Kill every process of the runs' process groups: the ranks, and what they started (rank 0's
    rendezvous server lives in rank 0's group)."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if p.returncode is None:
            p.communicate()


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _assert_nothing_left(procs, within=20):
    """Once the ranks have ended, whatever they started (rank 0's rendezvous server) ends too."""
    end = time.monotonic() + within
    while any(_group_alive(p.pid) for p in procs) and time.monotonic() < end:
        time.sleep(0.1)
    left = [p.pid for p in procs if _group_alive(p.pid)]
    assert not left, f"processes left running in the process groups {left} after the ranks ended"


# ----------------------------------------------------------------------------------------------
# Without MPI: what loads, DataParallel, multiprocessing, argument checks
# ----------------------------------------------------------------------------------------------
def test_import_glasstorch_does_not_load_mpi():
    code = ("import sys, glasstorch, glasstorch.nn, glasstorch.distributed, glasstorch.multiprocessing, "
            "glasstorch.nn.parallel; import glasstorch.distributed.run; "
            "print('mpi4py' in sys.modules, 'mpi4py.MPI' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert result.stdout.split() == ["False", "False"], result.stderr


def test_names_match_torch():
    import torch
    import torch.distributed as tdist
    import glasstorch.distributed as gdist
    for name in ["init_process_group", "destroy_process_group", "is_initialized", "is_available", "get_rank",
                 "get_world_size", "barrier", "new_group", "broadcast", "all_reduce", "reduce", "all_gather",
                 "all_gather_into_tensor", "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor",
                 "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv", "P2POp",
                 "all_gather_object", "gather_object", "broadcast_object_list", "scatter_object_list", "ReduceOp",
                 "Backend", "GroupMember", "group", "monitored_barrier", "get_backend", "get_process_group_ranks",
                 "get_global_rank", "get_group_rank", "is_torchelastic_launched", "DistBackendError", "DistError"]:
        assert hasattr(tdist, name) and hasattr(gdist, name), name
    assert str(gdist.ReduceOp.MAX) == str(tdist.ReduceOp.MAX) == "RedOpType.MAX"
    assert gdist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo"
    for name in ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException",
                 "get_context", "set_start_method", "get_start_method", "Queue", "Process", "get_all_start_methods",
                 "set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]:
        assert hasattr(torch.multiprocessing, name) and hasattr(gmp, name), name
    assert issubclass(gdist.DistBackendError, gdist.DistError) and issubclass(gdist.DistError, RuntimeError)


def test_errors_before_init_are_torchs():
    import torch.distributed as tdist
    import glasstorch.distributed as gdist
    for fn in (lambda d: d.get_rank(), lambda d: d.get_world_size(), lambda d: d.barrier(),
               lambda d: d.all_reduce(glasstorch.ones(2) if d is gdist else __import__("torch").ones(2)),
               lambda d: d.all_reduce(glasstorch.ones(2) if d is gdist else __import__("torch").ones(2),
                                      op=d.ReduceOp.BXOR)):
        with pytest.raises(ValueError) as ours:
            fn(gdist)
        with pytest.raises(ValueError) as theirs:
            fn(tdist)
        assert str(ours.value) == str(theirs.value)
    assert not gdist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        glasstorch.nn.parallel.DistributedDataParallel(glasstorch.nn.Linear(2, 2))


def test_rendezvous_errors_are_torchs(monkeypatch):
    from glasstorch.distributed.rendezvous import rendezvous
    for var in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="env:// rendezvous: environment variable RANK expected, but not set"):
        rendezvous("env://")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="environment variable MASTER_ADDR expected, but not set"):
        rendezvous("env://")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    assert rendezvous("env://") == (1, 2, ("127.0.0.1", 29500))
    assert rendezvous("tcp://10.0.0.1:1234", rank=0, world_size=4) == (0, 4, ("10.0.0.1", 1234))
    assert rendezvous("tcp://h:1?rank=2&world_size=3") == (2, 3, ("h", 1))
    with pytest.raises(ValueError, match="tcp:// rendezvous: rank parameter missing"):
        rendezvous("tcp://h:1", world_size=2)
    with pytest.raises(ValueError, match="tcp:// rendezvous: port number missing"):
        rendezvous("tcp://h", rank=0, world_size=2)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        rendezvous("tcp://h:1", rank=2, world_size=2)
    with pytest.raises(RuntimeError, match="No rendezvous handler for foo://"):
        rendezvous("foo://x")


def test_init_process_group_argument_errors():
    import glasstorch.distributed as gdist
    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        gdist.init_process_group("nccl")
    with pytest.raises(TypeError, match="Expected timeout argument to be of type datetime.timedelta"):
        gdist.init_process_group("gloo", timeout=30)
    assert not gdist.is_initialized()


def test_process_mapping_groups_ranks_by_host():
    from glasstorch.distributed._pmi import process_mapping
    assert process_mapping(["a", "a", "a"]) == "(vector,(0,1,3))"
    assert process_mapping(["a", "a", "b", "b"]) == "(vector,(0,1,2),(1,1,2))"
    assert process_mapping(["a", "b", "a"]) == "(vector,(0,1,1),(1,1,1),(0,1,1))"


def test_launcher_accepts_torchruns_flags():
    from glasstorch.distributed.run import parse_args, _nproc, _nnodes
    a = parse_args(["--nproc_per_node", "3", "--nnodes", "2", "--node_rank", "1", "--master_addr", "h",
                    "--master_port", "1234", "train.py", "--lr", "0.1"])
    b = parse_args(["--nproc-per-node", "3", "--nnodes", "2", "--node-rank", "1", "--master-addr", "h",
                    "--master-port", "1234", "train.py", "--lr", "0.1"])
    assert vars(a) == vars(b)
    assert (a.training_script, a.training_script_args, _nproc(a.nproc_per_node), _nnodes(a.nnodes)) == \
        ("train.py", ["--lr", "0.1"], 3, 2)
    assert _nnodes("2:2") == 2
    with pytest.raises(ValueError, match="elastic ranges are not supported"):
        _nnodes("1:4")
    with pytest.raises(ValueError, match="Unsupported nproc_per_node value: many"):
        _nproc("many")


def test_launcher_summary_names_the_first_failure(tmp_path, capsys):
    from glasstorch.distributed.run import _report
    for rank, when, error in ((2, 2.0, "DistBackendError: rank 1 failed: ..."), (1, 1.0, "ValueError: boom")):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(
            {"time": when, "host": "h", "pid": 10 + rank, "rank": str(rank), "local_rank": str(rank), "error": error,
             "traceback": f"Traceback (most recent call last):\n{error}\n"}))
    _report("train.py", str(tmp_path), 1)
    err = capsys.readouterr().err
    root = err[err.index("Root Cause (first observed failure):"):]
    assert "train.py FAILED" in err and "rank      : 2 (local_rank: 2)" in err[:err.index("Root Cause")]
    assert "rank      : 1 (local_rank: 1)" in root and "error     : ValueError: boom" in root
    (tmp_path / "none").mkdir()
    _report("train.py", str(tmp_path / "none"), -9)   # killed ranks leave no record
    assert "no rank left a traceback" in capsys.readouterr().err


def test_data_parallel_is_a_pass_through_like_torchs_without_gpus():
    import torch
    glasstorch.manual_seed(0)
    ours = glasstorch.nn.Linear(4, 3)
    theirs = torch.nn.Linear(4, 3)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    dp, tdp = glasstorch.nn.DataParallel(ours), torch.nn.DataParallel(theirs)
    assert glasstorch.nn.parallel.DataParallel is glasstorch.nn.DataParallel
    assert dp.module is ours and dp.device_ids == tdp.device_ids == []
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out, tout = dp(glasstorch.tensor(x)), tdp(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(glasstorch.nn.parallel.data_parallel(ours, glasstorch.tensor(x)).detach().numpy(),
                               out.detach().numpy())


def test_draw_marks_leaves_whose_gradient_hook_describes_itself():
    """What DDP's hook shows in inspection.draw, without processes: any post-accumulate hook with a
    ``draw_label`` is drawn on its leaf (and outlined); hooks without one are not."""
    from glasstorch.inspection import draw

    class Hook:
        draw_label = "DDP all_reduce: bucket 0 (starts it)"

        def __call__(self, param):
            pass

    w, b = glasstorch.ones(3, requires_grad=True), glasstorch.ones(3, requires_grad=True)
    w.register_post_accumulate_grad_hook(Hook())
    b.register_post_accumulate_grad_hook(lambda p: None)
    d = draw((w * b).sum(), params={"w": w, "b": b})
    leaves = {n.label.split("\n")[0]: n for n in d.nodes if n.kind == "leaf"}
    assert leaves["w"].hooks == ("DDP all_reduce: bucket 0 (starts it)",)
    assert leaves["w"].label == "w\n(3,)\nDDP all_reduce: bucket 0 (starts it)"
    assert leaves["b"].hooks == () and leaves["b"].label == "b\n(3,)"
    assert d.dot.count("penwidth=2") == 1
    assert 'stroke-width="2"' in d.svg(engine="python")


def _square_then_exit(i, results, squared):
    results.put((i, i * i))
    if i == 1:
        squared.set()
    else:
        squared.wait(60)   # process 1's result is in: now join() reports this exit, and stops nothing
        sys.exit(3)


def _fail_on_one(i):
    if i == 1:
        raise ValueError(f"process {i} fails")
    time.sleep(30)  # the parent must stop this one once process 1 failed


def test_spawn_runs_and_reports_failures_as_torch():
    """Two spawns (each process start costs seconds on a busy machine): one whose processes run and
    one exits with a code, one where a process raises."""
    ctx = gmp.get_context("spawn")
    results, squared = ctx.SimpleQueue(), ctx.Event()
    context = gmp.start_processes(_square_then_exit, args=(results, squared), nprocs=2, join=False,
                                  start_method="spawn")
    assert isinstance(context, gmp.ProcessContext) and len(context.pids()) == 2
    with pytest.raises(gmp.ProcessExitedException, match="process 0 terminated with exit code 3") as info:
        while not context.join():
            pass
    assert info.value.exit_code == 3 and info.value.error_index == 0
    assert sorted(results.get() for _ in range(2)) == [(0, 0), (1, 1)]
    start = time.monotonic()
    with pytest.raises(gmp.ProcessRaisedException) as info:
        gmp.spawn(_fail_on_one, nprocs=2)
    assert time.monotonic() - start < 25   # process 0 was terminated, not waited for
    assert info.value.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(info.value)
    assert "ValueError: process 1 fails" in str(info.value)


# ----------------------------------------------------------------------------------------------
# Every collective against NumPy, then DistributedDataParallel against one process on the
# concatenated batches: 3 ranks through the launcher (mpiexec), 2 through spawn + env://
# ----------------------------------------------------------------------------------------------
def _checked(out, world_size):
    # the ranks share one stdout: their lines may interleave, so match the records, not lines
    records = [(int(r), int(n)) for r, n in re.findall(r"CHECKED (\d+) (\d+)", out)]
    assert sorted(r for r, _ in records) == list(range(world_size)), out
    assert all(n > 60 for _, n in records), out
    # tutorial.py's async collectives and DDP with its progress thread, run last by every rank
    assert sorted(re.findall(r"OK \d", out)) == [f"OK {r}" for r in range(world_size)], out


def _script_module():
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("suite", SCRIPTS / "suite.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _single_process_reference(world_size):
    s = _script_module()
    x, y = s.make_data(world_size)
    F = glasstorch.nn.functional
    # plain steps: the global batch of step k is the ranks' shards together
    model = s.make_model(seed=0)
    opt = glasstorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(s.STEPS):
        parts = [s.batch(x, y, step, r, world_size) for r in range(world_size)]
        xs, ys = glasstorch.cat([p[0] for p in parts]), glasstorch.cat([p[1] for p in parts])
        opt.zero_grad()
        F.mse_loss(model(xs), ys).backward()
        opt.step()
    trained = s.params(model)
    # accumulation: two global micro-batches, gradients summed, one step
    model = s.make_model(seed=10)
    opt = glasstorch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    for step in (0, 1):
        parts = [s.batch(x, y, step, r, world_size) for r in range(world_size)]
        F.mse_loss(model(glasstorch.cat([p[0] for p in parts])), glasstorch.cat([p[1] for p in parts])).backward()
    opt.step()
    return trained, s.params(model)


def _check_training(out_dir, world_size):
    """Every rank's parameters after DDP's steps, and after no_sync accumulation, are those of one process
    trained on the concatenated batches (float64); returns the ranks' reports."""
    reports = [json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(world_size)]
    trained, accumulated = _single_process_reference(world_size)
    for r, rep in enumerate(reports):
        for name, value in trained.items():
            np.testing.assert_allclose(rep["trained"][name], value, rtol=1e-12, atol=1e-12, err_msg=f"rank {r} {name}")
        for name, value in accumulated.items():
            np.testing.assert_allclose(rep["accumulated"][name], value, rtol=1e-12, atol=1e-12,
                                       err_msg=f"rank {r} {name} (no_sync)")
    # without the trainer's averaging the local gradients differ: no_sync really skipped it
    assert reports[0]["local_grad_after_no_sync"] != reports[1]["local_grad_after_no_sync"]
    return reports


def _check_torchrun_environment(reports, nproc_per_node, master_addr):
    """What the launcher set before each rank's script ran, as torchrun sets it."""
    run_ids = set()
    for r, rep in enumerate(reports):
        env = rep["environment"]
        assert rep["available_and_initialized"] == [True, True]
        assert {k: env[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK")} == \
            {"RANK": str(r), "LOCAL_RANK": str(r % nproc_per_node), "WORLD_SIZE": str(len(reports)),
             "LOCAL_WORLD_SIZE": str(nproc_per_node), "GROUP_RANK": str(r // nproc_per_node)}, (r, env)
        assert env["MASTER_ADDR"] == master_addr and env["MASTER_PORT"].isdigit(), (r, env)
        run_ids.add(env["TORCHELASTIC_RUN_ID"])
    assert len(run_ids) == 1 and None not in run_ids


def _torch_bitwise_float_errors():
    """torch's errors for BAND/BOR/BXOR on floating-point and complex tensors, from a gloo group of one."""
    import torch
    import torch.distributed as tdist
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1)
    errors = {}
    try:
        for op in (tdist.ReduceOp.BAND, tdist.ReduceOp.BOR, tdist.ReduceOp.BXOR):
            for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64):
                try:
                    tdist.all_reduce(torch.ones(3, dtype=dtype), op=op)
                except (RuntimeError, ValueError) as e:
                    errors[f"{op} {dtype}"] = str(e)
    finally:
        tdist.destroy_process_group()
    return errors


def _check_ddp_reports(out_dir, world_size):
    reports = _check_training(out_dir, world_size)
    torch_errors = _torch_bitwise_float_errors()
    assert len(torch_errors) == 15
    for r, rep in enumerate(reports):
        assert rep["bitwise_float_errors"] == torch_errors
        assert rep["buckets"] >= 3
        assert rep["timeline"] == {"buckets": list(range(rep["buckets"])), "ordered": True}
        assert rep["state_dict_keys"][:2] == ["module.0.weight", "module.0.bias"]
        # find_unused_parameters: head_b used on rank 0 only -> its averaged gradient on every rank
        assert rep["unused"]["never.weight"] is None
        assert rep["unused"]["head_b.weight"] == reports[0]["unused"]["head_b.weight"]
        assert rep["unused"]["body.weight"] == reports[0]["unused"]["body.weight"]
        assert "Expected to have finished reduction in the prior iteration" in rep["unused_error"]
        assert "Parameters which did not receive grad for rank" in rep["unused_error"]
        assert "head_b.weight, head_b.bias, never.weight, never.bias" in rep["unused_error"]
        assert "DDP expects same model across all ranks" in rep["mismatch_error"]
        assert "'0.weight'" in rep["mismatch_error"] and "[6, 5]" in rep["mismatch_error"] \
            and "[4, 5]" in rep["mismatch_error"]
        assert rep["count_error"] == (f"DDP expects same model across all ranks, but Rank {world_size - 1} has 6 "
                                      f"params, while rank 0 has inconsistent 4 params (parameters on only one of "
                                      f"them: 2.bias, 2.weight).")
        assert rep["buffer_after_forward"] == [0.0] * 5
        # the uneven batch: rank 1 ran 3 samples where the others ran 4
        kinds = [kind for kind, _ in rep["seatbelt"]]
        assert kinds == ["UnevenBatchWarning"], rep["seatbelt"]
        assert f"rank {r}" in rep["seatbelt"][0][1] and "DistributedSampler" in rep["seatbelt"][0][1]
        labels = rep["draw_hooks"]
        assert set(labels) == {f"module.{i}.{k}" for i in (0, 2, 4) for k in ("weight", "bias")}
        assert all(len(v) == 1 and v[0].startswith("DDP all_reduce: bucket 0") for v in labels.values())
        assert sum(v[0].endswith("(starts it)") for v in labels.values()) == 1
        assert rep["draw_dot_marked"]
    return reports


@needs_mpi
def test_three_ranks_through_the_launcher(tmp_path):
    """``python -m glasstorch.distributed.run --nproc-per-node 3`` and ``init_process_group("mpi")``."""
    code, out, err, _ = _launch(3, "suite.py", str(tmp_path))
    assert code == 0, err[-4000:]
    _checked(out, 3)
    _check_torchrun_environment(_check_ddp_reports(tmp_path, 3), 3, "127.0.0.1")


@needs_mpi
def test_two_ranks_through_spawn_with_master_addr_in_the_environment(tmp_path):
    """``mp.spawn`` + ``init_process_group("gloo", rank=rank, world_size=n)`` with MASTER_ADDR/PORT set
    (env://), as the tutorials."""
    code, out, err, _ = _run([sys.executable, "suite.py", str(tmp_path), "spawn", "2"], 90)
    assert code == 0, err[-4000:]
    _checked(out, 2)
    _check_ddp_reports(tmp_path, 2)


@needs_mpi
@pytest.mark.parametrize("init_method", ["env://", "tcp://"])
def test_three_ranks_through_spawn_train_as_one_process(tmp_path, init_method):
    """``mp.spawn`` of 3 ranks, ``init_process_group("gloo", init_method="tcp://127.0.0.1:PORT", rank=,
    world_size=)`` or env://: DDP's steps (and no_sync accumulation) give one process's parameters."""
    code, out, err, _ = _run([sys.executable, "suite.py", str(tmp_path), "spawn", "3", "--training-only"]
                             + (["--tcp"] if init_method == "tcp://" else []), 90, nothing_left=True)
    assert code == 0, err[-4000:]
    _check_training(tmp_path, 3)


@needs_mpi
def test_spawn_with_a_tcp_init_method():
    """``mp.spawn`` + ``init_process_group("gloo", init_method="tcp://127.0.0.1:PORT", rank=, world_size=)``."""
    code, out, err, _ = _run([sys.executable, "spawn_tcp.py", "2"], 60)
    assert code == 0, err[-3000:]
    assert sorted(re.findall(r"TCP OK \d", out)) == ["TCP OK 0", "TCP OK 1"], out


@needs_mpi
def test_launcher_with_an_mpi_hostfile(tmp_path):
    """``--hostfile``: one mpiexec starts ``--nproc-per-node`` ranks on each host of the file (here one)."""
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# the machines of the job\nlocalhost\n")
    code, out, err, _ = _run([sys.executable, "-m", "glasstorch.distributed.run", "--hostfile", str(hostfile),
                              "--nproc-per-node", "2", "faults.py", "ok"], 60)
    assert code == 0, err[-3000:]
    assert sorted(re.findall(r"DONE \d", out)) == ["DONE 0", "DONE 1"], out


# ----------------------------------------------------------------------------------------------
# Faults end every rank with an error naming the culprit, well before the 60 s timeout
# ----------------------------------------------------------------------------------------------
@needs_mpi
def test_a_rank_that_raises_stops_the_others_naming_it():
    code, out, err, elapsed = _launch(3, "faults.py", "raise", limit=60)
    assert code == 1
    assert "Root Cause (first observed failure)" in err and "rank      : 1 (local_rank: 1)" in err
    assert "ValueError: rank 1 broke on purpose" in err
    # each other rank either reported the failure itself or was stopped by mpiexec right after
    errors = re.findall(r"ERROR ([02]): (.*?), while rank", out)
    assert errors and all(msg == "rank 1 failed: ValueError: rank 1 broke on purpose" for _, msg in errors), out
    assert elapsed < 45


@needs_mpi
def test_a_rank_whose_script_ends_early_is_named():
    """Plain ``mpiexec -n 2 python train.py`` (no launcher) with ``init_process_group("mpi")``."""
    from glasstorch.distributed.run import _find_mpiexec
    code, out, err, elapsed = _run([_find_mpiexec(None), "-n", "2", sys.executable, "faults.py", "exit"], 60,
                                   env=_env(GLASSTORCH_TEST_BACKEND="mpi"))
    assert code != 0
    assert "ERROR 0: rank 1 exited (its script ended) without destroy_process_group(), while rank 0 waited for " \
           "it in all_reduce" in out, out + err[-2000:]
    assert elapsed < 45


@needs_mpi
def test_a_killed_rank_is_named_by_the_rendezvous():
    procs = _ranks_apart("faults.py", ["kill"], 2, limit=60)
    try:
        code, out, err = _finish(procs[0], 45)
        assert code not in (None, 0), "rank 0 did not end"
        assert "ERROR 0: rank 1 died" in out, out + err[-3000:]
    finally:
        _kill_all(procs)


def _finish_all(procs, limit):
    """Wait for every process until ``limit`` seconds from now; (code, out, err) each, code None if it still ran."""
    end = time.monotonic() + limit
    return [_finish(p, max(0.1, end - time.monotonic())) for p in procs]


# (how, failing rank, what the others do): rank 0 serves the rendezvous, so it fails in each way; the
# launcher's and the rendezvous' tests above have rank 1 fail while the others wait
FAIL_AND_END = {"rank 0 raises, the others end": ("raise", 0, "end"),
                "rank 1 raises, the others end": ("raise", 1, "end"),
                "rank 0 is killed, the others end": ("kill", 0, "end"),
                "rank 0 raises, rank 1 waits for it": ("raise", 0, "wait"),
                "rank 0 is killed, rank 1 waits for it": ("kill", 0, "wait")}


@needs_mpi
@pytest.mark.parametrize("case", list(FAIL_AND_END))
def test_a_failed_rank_lets_every_other_rank_end(case):
    """3 ranks started apart (env://). A rank raises or is killed; the others sleep past its failure and
    their scripts then end normally, or one of them waits for it in a collective and must fail naming
    it. Nobody may hang (in MPI_Finalize, MPI_Abort, or the rendezvous), and nothing of the job may
    outlive it."""
    how, failing, others = FAIL_AND_END[case]
    start = time.monotonic()
    procs = _ranks_apart("fail_and_end.py", [how, str(failing), others], 3, limit=90)
    try:
        results = _finish_all(procs, 90)
        elapsed = time.monotonic() - start
        dumps = "".join(f"\n--- rank {r}: {code}\n{out}{err[-2000:]}" for r, (code, out, err) in enumerate(results))
        assert all(code is not None for code, _, _ in results), "a rank hung" + dumps
        assert elapsed < 45, f"the ranks took {elapsed:.0f}s: a wait for the 60 s timeout" + dumps
        assert results[failing][0] == (1 if how == "raise" else -signal.SIGKILL), dumps
        waiter = (failing + 1) % 3 if others == "wait" else None
        if waiter is not None:
            named = (f"rank {failing} failed: ValueError: rank {failing} broke on purpose" if how == "raise"
                     else f"rank {failing} died")
            assert results[waiter][0] not in (None, 0) and f"ERROR {waiter}: {named}" in results[waiter][1], dumps
        for r in set(range(3)) - {failing, waiter}:
            assert results[r][0] == 0 and f"END {r}" in results[r][1], dumps
        _assert_nothing_left(procs)
    finally:
        _kill_all(procs)


@needs_mpi
@pytest.mark.parametrize("how", ["raise", "kill"])
def test_spawn_reports_the_failed_rank_and_leaves_nothing_running(how):
    """A world of 3 under ``mp.spawn`` (``tcp://``), rank 0 failing while rank 1 waits for it: the
    parent raises torch's exception for process 0 and stops the others, and rank 0's rendezvous
    server ends with them."""
    code, out, err, _ = _run([sys.executable, "fail_and_end.py", how, "0", "wait", "spawn", "3"], 90,
                             nothing_left=True)
    assert code == 1, out + err
    if how == "raise":
        assert "ProcessRaisedException" in err and "-- Process 0 terminated with the following error:" in err, err
        assert "ValueError: rank 0 broke on purpose" in err, err
        # spawn's child catches the exception (for the parent): the rank still leaves as one that failed,
        # and its exit waits for the others' acknowledgements, so the waiting rank says so before the
        # parent stops it
        assert re.findall(r"ERROR 1: (.*), while", out) == ["rank 0 failed: ValueError: rank 0 broke on purpose"], out
    else:
        assert "ProcessExitedException: process 0 terminated with signal SIGKILL" in err, err
        # the parent may stop the waiting rank before it names the dead one
        assert all(msg.startswith("rank 0 died") for msg in re.findall(r"ERROR 1: (.*)", out)), out


@needs_mpi
def test_a_hung_rank_times_out_with_a_diagnosis():
    """The ranks form their group through ``init_method="tcp://..."`` (rank and world_size passed)."""
    procs = _ranks_apart("faults.py", ["hang"], 2, limit=60,
                         env_extra={"GLASSTORCH_TEST_TIMEOUT": 3, "GLASSTORCH_TEST_TCP": 1})
    try:
        code, out, err = _finish(procs[0], 45)
        assert code not in (None, 0), "rank 0 did not end"
        assert "ERROR 0: all_reduce #" in out and "timed out after 3s on rank 0" in out, out + err[-3000:]
        assert "Rank 1 did not answer" in out
    finally:
        _kill_all(procs)


# monitored_barrier, against torch 2.13's gloo messages (run with torch: the same texts, "2000 ms" for 2 s)
MONITORED = {
    # (world size, ranks that skip it, wait_all_ranks): rank 0's message, and whether another rank that
    # did arrive ends with torch's "successfully reached" error
    "2 ranks, rank 1 missing": (2, "1", "0", "[Rank 0]: Rank 1 failed to pass monitoredBarrier in 1000 ms\n "
                                             "Original exception: \nTimed out waiting", None),
    "3 ranks, rank 2 missing": (3, "2", "0", "[Rank 0]: Rank 2 failed to pass monitoredBarrier in 1000 ms\n "
                                             "Original exception: \nTimed out waiting", 1),
    "3 ranks, wait_all_ranks": (3, "1,2", "1", "[Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 1000 ms", None),
}


@needs_mpi
@pytest.mark.parametrize("case", list(MONITORED))
def test_monitored_barrier_names_the_ranks_that_did_not_reach_it(case):
    """Rank 0 raises torch's RuntimeError within the barrier's 1 s timeout (not the group's 60 s),
    naming the first missing rank, or all of them with ``wait_all_ranks``; a rank that arrived
    then ends with torch's message instead of waiting for the group's timeout. Every rank first
    passes two monitored barriers (float and timedelta timeouts; rank 0 checks torch's argument
    errors: a timeout that is not a timedelta, a group of the mpi backend)."""
    world_size, skip, wait_all, message, arrived = MONITORED[case]
    procs = _ranks_apart("monitored.py", [skip, wait_all], world_size, limit=60)
    try:
        results = dict(enumerate(_finish_all(procs, 60)))
        _assert_nothing_left(procs)
    finally:
        _kill_all(procs)
    # the skipping ranks' scripts end normally after rank 0 has failed (two of them once hung in MPI_Finalize)
    for r in map(int, skip.split(",")):
        assert results[r][0] == 0, f"rank {r}: {results[r][0]}\n{results[r][1]}{results[r][2][-3000:]}"
    outs = "".join(out for _, out, _ in results.values())
    assert sorted(re.findall(r"PASSED \d", outs)) == [f"PASSED {r}" for r in range(world_size)], \
        outs + results[0][2][-3000:]
    code, out, err = results[0]
    assert code not in (None, 0)
    error = re.search(r"ERROR 0 ([\d.]+): RuntimeError\((.*)\)$", out, re.M)
    assert error, out + err[-3000:]
    assert float(error[1]) < 5, error[0]            # the barrier's timeout, not the group's
    assert ast.literal_eval(error[2]).startswith(message), error[2]
    if arrived is not None:
        mine = re.search(rf"ERROR {arrived} [\d.]+: RuntimeError\((.*)\)$", results[arrived][1], re.M)
        assert mine, results[arrived][1] + results[arrived][2][-3000:]
        assert ast.literal_eval(mine[1]).startswith(
            f"Rank {arrived} successfully reached monitoredBarrier, but received errors while waiting for send/recv "
            f"from rank 0. Please check rank 0 logs for faulty rank.\n Original exception: \nrank 0 failed: "
            f"RuntimeError: {message}"), mine[1]


@needs_mpi
def test_launcher_without_mpiexec_across_two_node_launchers():
    """--nnodes 2: one launcher per 'machine' (both here), meeting at the master address."""
    port = _free_port()
    launchers = [subprocess.Popen([sys.executable, "-m", "glasstorch.distributed.run", "--nnodes", "2", "--node-rank",
                                   str(node), "--nproc-per-node", "1", "--master-port", str(port), "faults.py",
                                   "ok"],
                                  cwd=SCRIPTS, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True) for node in (0, 1)]
    try:
        results = [_finish(p, 60) for p in launchers]
        for code, out, err in results:
            assert code == 0, err[-3000:]
        assert sorted(re.findall(r"DONE \d", "".join(out for _, out, _ in results))) == ["DONE 0", "DONE 1"]
    finally:
        _kill_all(launchers)


# ----------------------------------------------------------------------------------------------
# Two machines: two network namespaces joined by a virtual cable, each with its own address and
# host name (Linux, as root: CI's case)
# ----------------------------------------------------------------------------------------------
class _Nodes:
    """Two network namespaces, ``node0`` at 10.99.0.1 and ``node1`` at 10.99.0.2, linked by a veth pair
    (named ``gtlink`` in both) and nothing else (each has its own loopback): a process in one reaches the
    other only through the link. :meth:`start` runs a command in a node, under that node's host name (its
    own UTS namespace), so that MPI sees two hosts and cannot use shared memory between them."""
    ADDRESSES = ("10.99.0.1", "10.99.0.2")
    LINK = "gtlink"

    def __init__(self):
        self.tag = f"gt{os.getpid() % 100000}"
        self.namespaces = [f"{self.tag}n{i}" for i in (0, 1)]
        self.ends = [f"{self.tag}v{i}" for i in (0, 1)]   # the link's ends' names before they move in

    def create(self):
        steps = [["ip", "netns", "add", ns] for ns in self.namespaces]
        steps.append(["ip", "link", "add", self.ends[0], "type", "veth", "peer", "name", self.ends[1]])
        for ns, end, address in zip(self.namespaces, self.ends, self.ADDRESSES):
            steps += [["ip", "link", "set", end, "netns", ns], ["ip", "-n", ns, "link", "set", end, "name", self.LINK],
                      ["ip", "-n", ns, "addr", "add", f"{address}/24", "dev", self.LINK],
                      ["ip", "-n", ns, "link", "set", self.LINK, "up"], ["ip", "-n", ns, "link", "set", "lo", "up"]]
        for step in steps:
            subprocess.run(step, check=True, capture_output=True, text=True, timeout=30)

    def delete(self):
        for ns in self.namespaces:    # deleting a namespace deletes its end of the link, and so the link
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "delete", self.ends[0]], capture_output=True, timeout=30)

    def start(self, node, args, cwd=SCRIPTS, **env):
        command = ["ip", "netns", "exec", self.namespaces[node], "unshare", "--uts", "sh", "-c",
                   'hostname "$0" && exec "$@"', f"node{node}", *map(str, args)]
        return subprocess.Popen(command, cwd=cwd, env=_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)

    def bytes_sent(self, node):
        with subprocess.Popen(["ip", "netns", "exec", self.namespaces[node], "cat",
                               f"/sys/class/net/{self.LINK}/statistics/tx_bytes"], stdout=subprocess.PIPE,
                              text=True) as p:
            return int(p.communicate(timeout=30)[0])


@pytest.fixture
def two_nodes():
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not (shutil.which("ip") and shutil.which("unshare")):
        pytest.skip("two machines are simulated with network namespaces: Linux, root, iproute2 and unshare")
    nodes = _Nodes()
    try:
        nodes.create()
    except subprocess.CalledProcessError as e:
        nodes.delete()
        if "Operation not permitted" in e.stderr or "Permission denied" in e.stderr:
            pytest.skip(f"network namespaces are not permitted here: {e.stderr.strip()}")
        raise
    try:
        yield nodes
    finally:
        nodes.delete()


def _check_two_machines(nodes, processes, out_dir, before):
    try:
        results = _finish_all(processes, 90)
        for code, out, err in results:
            assert code == 0, "".join(f"\n--- {i}: {c}\n{o}{e[-3000:]}" for i, (c, o, e) in enumerate(results))
        _assert_nothing_left(processes)
    finally:
        _kill_all(processes)
    reports = _check_training(out_dir, 2)
    assert [rep["host"] for rep in reports] == ["node0", "node1"]
    _check_torchrun_environment(reports, 1, _Nodes.ADDRESSES[0])
    sent = [nodes.bytes_sent(i) - b for i, b in enumerate(before)]
    # the model has 419 float64 parameters (3.3 KB): DDP's broadcasts and all_reduces moved more than that
    # each way. Measured on a quiet machine: node0 14-17 KB (it also sends rank 0's broadcast), node1 9.8-12.2
    # KB; with the machine loaded, node1 5.9 KB (its three all_reduces' share of the payload, with fewer TCP
    # acknowledgements of its own): more than one copy of the parameters is the bound that holds in both
    assert all(n > 3352 for n in sent), sent


@needs_mpi
def test_two_machines_through_one_launcher_each(two_nodes, tmp_path):
    """torchrun's multi-node form across two 'machines' (network namespaces with their own addresses and
    host names): ``python -m glasstorch.distributed.run --nnodes 2 --node-rank N --master-addr 10.99.0.1
    --nproc-per-node 1 train.py`` on each, ``init_process_group("gloo")`` (env://, no mpiexec). DDP's steps
    give one process's parameters on the concatenated batches, and the gradients went over the link."""
    before = [two_nodes.bytes_sent(i) for i in (0, 1)]
    launchers = [two_nodes.start(node, [sys.executable, "-m", "glasstorch.distributed.run", "--nnodes", 2,
                                        "--node-rank", node, "--master-addr", _Nodes.ADDRESSES[0],
                                        "--master-port", 29500, "--nproc-per-node", 1, "suite.py", tmp_path,
                                        "--backend", "gloo", "--training-only"])
                 for node in (0, 1)]
    _check_two_machines(two_nodes, launchers, tmp_path, before)


@needs_mpi
def test_two_machines_through_an_mpi_hostfile(two_nodes, tmp_path):
    """MPI's multi-machine form: ``python -m glasstorch.distributed.run --hostfile hosts --nproc-per-node 1
    train.py`` on node0, one mpiexec starting a rank on each host of the file (10.99.0.1, 10.99.0.2), as
    it would over ssh: hydra's ssh is ``netns_ssh.sh`` (HYDRA_LAUNCHER_EXEC), which enters the host's
    namespace; ``init_process_group("mpi")``."""
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{address}\n" for address in _Nodes.ADDRESSES))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    before = [two_nodes.bytes_sent(i) for i in (0, 1)]
    launcher = two_nodes.start(0, [sys.executable, "-m", "glasstorch.distributed.run", "--hostfile", hostfile,
                                   "--nproc-per-node", 1, "suite.py", out_dir, "--training-only"],
                               HYDRA_LAUNCHER="ssh", HYDRA_LAUNCHER_EXEC=SCRIPTS / "netns_ssh.sh",
                               HYDRA_IFACE=_Nodes.LINK, GLASSTORCH_TEST_NETNS=two_nodes.tag)
    _check_two_machines(two_nodes, [launcher], out_dir, before)
