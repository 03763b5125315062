"""Every collective against a NumPy reference, run on each rank (suite.py calls :func:`run_checks`).

Rank r's data is a known function of r, so every rank can compute what every result must be.
Any failed check raises; ``CHECKS[0]`` counts the checks done.
"""

import numpy as np

import glasstorch as torch
import glasstorch.distributed as dist

CHECKS = [0]
BITWISE_FLOAT_ERRORS = {}   # "op dtype" -> the message, for the test to compare with torch's


def check(condition, what):
    if not condition:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")
    CHECKS[0] += 1


def close(t, expected, what):
    check(np.allclose(t.numpy().astype(np.float64), np.asarray(expected, dtype=np.float64)), f"{what}: got {t.tolist()}, "
          f"expected {np.asarray(expected).tolist()}")


def expect_error(kind, words, fn, what):
    try:
        fn()
    except kind as e:
        for w in words:
            check(w in str(e), f"{what}: '{w}' not in the message: {e}")
        return str(e)
    raise AssertionError(f"rank {dist.get_rank()}: {what}: no {kind.__name__} raised")


def works_after(what):
    """The default group still runs collectives right (after a mismatch error)."""
    n, r = dist.get_world_size(), dist.get_rank()
    t = torch.tensor(data(r))
    dist.all_reduce(t)
    close(t, sum(data(q) for q in range(n)), f"all_reduce after {what}")
    b = torch.tensor(data(r, (7,)))
    dist.broadcast(b, src=n - 1)
    close(b, data(n - 1, (7,)), f"broadcast after {what}")


def data(r, shape=(2, 3), dtype=np.float64):
    """Rank r's tensor: values that differ across ranks and positions."""
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64).reshape(shape) + 10 * r + 1).astype(dtype)


def run_checks():
    r, n = dist.get_rank(), dist.get_world_size()
    everyone = np.stack([data(q) for q in range(n)])

    # all_reduce, every op, several dtypes; async_op
    for op, ref in [(dist.ReduceOp.SUM, everyone.sum(0)), (dist.ReduceOp.AVG, everyone.mean(0)),
                    (dist.ReduceOp.PRODUCT, everyone.prod(0)), (dist.ReduceOp.MIN, everyone.min(0)),
                    (dist.ReduceOp.MAX, everyone.max(0))]:
        for dtype in (torch.float32, torch.float64):
            t = torch.tensor(data(r)).to(dtype)
            version = t._version
            dist.all_reduce(t, op=op)
            close(t, ref, f"all_reduce {op} {dtype}")
            check(t.dtype == dtype and t._version > version, "all_reduce keeps dtype, bumps version")
    ti = torch.tensor(data(r).astype(np.int64))
    dist.all_reduce(ti)
    close(ti, everyone.sum(0), "all_reduce int64")
    tb = torch.tensor([r == 0, False, True])
    dist.all_reduce(tb, op=dist.ReduceOp.MAX)
    check(tb.tolist() == [True, False, True], f"all_reduce bool MAX: {tb.tolist()}")
    th = torch.tensor(data(r)).half()
    dist.all_reduce(th)
    close(th, everyone.sum(0), "all_reduce float16 (through float32)")
    # the bitwise ops on every integer dtype and bool, against NumPy; torch's error for floating point
    bits = np.array([[r + 1, 3, 4 * r + 2, 255 - 17 * r, 1 << r]])
    every_bits = np.concatenate([np.array([[q + 1, 3, 4 * q + 2, 255 - 17 * q, 1 << q]]) for q in range(n)])
    for op, ufunc in [(dist.ReduceOp.BAND, np.bitwise_and), (dist.ReduceOp.BOR, np.bitwise_or),
                      (dist.ReduceOp.BXOR, np.bitwise_xor)]:
        for dtype, np_dtype in [(torch.uint8, np.uint8), (torch.int8, np.int8), (torch.int16, np.int16),
                                (torch.int32, np.int32), (torch.int64, np.int64)]:
            t = torch.tensor(bits.astype(np_dtype))
            dist.all_reduce(t, op=op)
            expected = ufunc.reduce(every_bits.astype(np_dtype), axis=0)
            check(t.dtype == dtype and t.numpy().tolist() == [expected.tolist()],
                  f"all_reduce {op} {dtype}: got {t.tolist()}, expected {expected.tolist()}")
        flags = torch.tensor([r == 0, True, False, r % 2 == 1])
        dist.all_reduce(flags, op=op)
        expected = ufunc.reduce(np.array([[q == 0, True, False, q % 2 == 1] for q in range(n)]), axis=0)
        check(flags.dtype == torch.bool and flags.tolist() == expected.tolist(),
              f"all_reduce {op} bool: got {flags.tolist()}, expected {expected.tolist()}")
        strided = torch.tensor(np.repeat(bits, 2, axis=0).astype(np.int32))[:, ::2]    # a non-contiguous view
        dist.all_reduce(strided, op=op)
        check(strided.numpy().tolist() == np.repeat(ufunc.reduce(every_bits.astype(np.int32), axis=0)[None], 2,
                                                    axis=0)[:, ::2].tolist(), f"all_reduce {op} of a view")
        for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            BITWISE_FLOAT_ERRORS[f"{op} {dtype}"] = expect_error(
                RuntimeError, [], lambda: dist.all_reduce(torch.ones(3, dtype=dtype), op=op), f"{op} on {dtype}")
        BITWISE_FLOAT_ERRORS[f"{op} {torch.complex64}"] = expect_error(
            ValueError, [], lambda: dist.all_reduce(torch.ones(3, dtype=torch.complex64), op=op), f"{op} on complex")
    tc = torch.tensor(data(r)).to(torch.complex128) * (1 + 1j)
    dist.all_reduce(tc)
    check(np.allclose(tc.numpy(), everyone.sum(0) * (1 + 1j)), "all_reduce complex SUM")
    expect_error(ValueError, ["MAX", "complex"], lambda: dist.all_reduce(tc, op=dist.ReduceOp.MAX), "complex MAX")
    t = torch.tensor(data(r))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    check(work.is_completed() and work.is_success(), "async all_reduce completed")
    close(t, everyone.sum(0), "async all_reduce")
    col = torch.tensor(data(r))[:, 1]          # a non-contiguous view: written back through the view
    dist.all_reduce(col)
    close(col, everyone.sum(0)[:, 1], "all_reduce of a column view")

    # broadcast from each root
    for src in range(n):
        t = torch.tensor(data(r))
        dist.broadcast(t, src=src)
        close(t, data(src), f"broadcast src={src}")

    # reduce: the root gets the sum, the others keep theirs
    for dst in range(n):
        t = torch.tensor(data(r))
        dist.reduce(t, dst=dst, op=dist.ReduceOp.MAX)
        close(t, everyone.max(0) if r == dst else data(r), f"reduce dst={dst}")

    # all_gather / all_gather_into_tensor (concatenated and stacked)
    out = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)]
    dist.all_gather(out, torch.tensor(data(r)))
    for q in range(n):
        close(out[q], data(q), f"all_gather[{q}]")
    cat = torch.zeros(2 * n, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(cat, torch.tensor(data(r)))
    close(cat, np.concatenate([data(q) for q in range(n)]), "all_gather_into_tensor (cat)")
    stacked = torch.zeros(n, 2, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(stacked, torch.tensor(data(r)))
    close(stacked, everyone, "all_gather_into_tensor (stack)")

    # gather / scatter
    for root in range(n):
        lst = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)] if r == root else None
        dist.gather(torch.tensor(data(r)), gather_list=lst, dst=root)
        if r == root:
            for q in range(n):
                close(lst[q], data(q), f"gather root={root} [{q}]")
        t = torch.zeros(2, 3, dtype=torch.float64)
        pieces = [torch.tensor(data(q) * 100) for q in range(n)] if r == root else None
        dist.scatter(t, scatter_list=pieces, src=root)
        close(t, data(r) * 100, f"scatter root={root}")

    # reduce_scatter (list and tensor forms)
    out = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter(out, [torch.tensor(data(r) + q) for q in range(n)])
    close(out, sum(data(q) + r for q in range(n)), "reduce_scatter")
    big = torch.tensor(np.concatenate([data(r) + q for q in range(n)]))
    out = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, big, op=dist.ReduceOp.AVG)
    close(out, sum(data(q) + r for q in range(n)) / n, "reduce_scatter_tensor AVG")

    # all_to_all with uneven sizes: rank r sends q+1 copies of (10r+q) to rank q
    inputs = [torch.full((q + 1,), float(10 * r + q), dtype=torch.float64) for q in range(n)]
    outputs = [torch.zeros(r + 1, dtype=torch.float64) for _ in range(n)]
    dist.all_to_all(outputs, inputs)
    for q in range(n):
        close(outputs[q], np.full(r + 1, 10 * q + r), f"all_to_all from {q}")
    single_in = torch.tensor(np.arange(2 * n, dtype=np.float64) + 100 * r)
    single_out = torch.zeros(2 * n, dtype=torch.float64)
    dist.all_to_all_single(single_out, single_in)
    close(single_out, np.concatenate([np.arange(2 * r, 2 * r + 2) + 100 * q for q in range(n)]), "all_to_all_single")

    # point to point: a ring, blocking and async, and recv from any rank
    right, left = (r + 1) % n, (r - 1) % n
    got = torch.zeros(2, 3, dtype=torch.float64)
    if r % 2 == 0:
        dist.send(torch.tensor(data(r)), dst=right)
        src = dist.recv(got, src=left)
    else:
        src = dist.recv(got, src=left)
        dist.send(torch.tensor(data(r)), dst=right)
    close(got, data(left), "send/recv ring")
    check(src == left, f"recv returns the sender ({src} != {left})")
    got = torch.zeros(4, dtype=torch.float64)
    works = [dist.isend(torch.full((4,), float(r), dtype=torch.float64), dst=right), dist.irecv(got, src=left)]
    for w in works:
        w.wait()
    close(got, np.full(4, left), "isend/irecv")
    ops = [dist.P2POp(dist.isend, torch.full((2,), float(r), dtype=torch.float64), right),
           dist.P2POp(dist.irecv, got2 := torch.zeros(2, dtype=torch.float64), left)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    close(got2, np.full(2, left), "batch_isend_irecv")
    if r == 0:
        senders = set()
        for _ in range(n - 1):
            t = torch.zeros(1, dtype=torch.float64)
            senders.add(dist.recv(t, tag=7))
            check(float(t) == 5.0, "recv from any rank: value")
        check(senders == set(range(1, n)), f"recv from any rank: senders {senders}")
    else:
        dist.send(torch.tensor([5.0], dtype=torch.float64), dst=0, tag=7)

    # objects
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r, "text": "x" * r})
    check(objs == [{"rank": q, "text": "x" * q} for q in range(n)], f"all_gather_object: {objs}")
    lst = ["a", 1, None] if r == 1 % n else [None, None, None]
    dist.broadcast_object_list(lst, src=1 % n)
    check(lst == ["a", 1, None], f"broadcast_object_list: {lst}")
    gathered = [None] * n if r == 0 else None
    dist.gather_object((r, "g"), gathered, dst=0)
    if r == 0:
        check(gathered == [(q, "g") for q in range(n)], f"gather_object: {gathered}")
    slot = [None]
    dist.scatter_object_list(slot, [{"for": q} for q in range(n)] if r == 0 else None, src=0)
    check(slot == [{"for": r}], f"scatter_object_list: {slot}")

    # a subgroup: ranks 0 and n-1 (the others get NON_GROUP_MEMBER)
    members = [0, n - 1]
    sub = dist.new_group(members)
    if r in members:
        t = torch.tensor(data(r))
        dist.all_reduce(t, group=sub)
        close(t, data(0) + data(n - 1), "all_reduce on a subgroup")
        check(dist.get_world_size(sub) == 2 and dist.get_rank(sub) == members.index(r), "subgroup rank/size")
        check(dist.get_process_group_ranks(sub) == members, "subgroup ranks")
    else:
        check(sub is dist.GroupMember.NON_GROUP_MEMBER, "non-member gets NON_GROUP_MEMBER")
    dist.barrier()

    # errors: each rank raises the same kind, naming what differs. Both shapes have run on every rank
    # before (and their signatures are remembered): the check still runs at every call
    for size in (2, 3):
        dist.all_reduce(torch.zeros(size))
    message = expect_error(RuntimeError, ["Detected mismatch between collectives", "shape=[2]", "shape=[3]"],
                           lambda: dist.all_reduce(torch.zeros(2 + (r == 1))), "all_reduce of mismatched shapes")
    check(f"Rank {r} is running collective: all_reduce(shape=[{2 + (r == 1)}]" in message, f"own side named: {message}")
    # the same check where MPI has no persistent collectives (before MPI-4): an Iallgather per check
    pg = dist.distributed_c10d._get_default_group()
    persistent, pg._exchange = pg._exchange, None
    try:
        t = torch.tensor(data(r))
        dist.all_reduce(t)
        close(t, sum(data(q) for q in range(n)), "all_reduce checked without a persistent request")
        expect_error(RuntimeError, ["Detected mismatch between collectives", "shape=[2]", "shape=[3]"],
                     lambda: dist.all_reduce(torch.zeros(2 + (r == 1))), "mismatch without a persistent request")
    finally:
        pg._exchange = persistent
    expect_error(RuntimeError, ["Detected mismatch between collectives", "broadcast", "all_reduce"],
                 lambda: dist.broadcast(torch.zeros(2), src=0) if r == 0 else dist.all_reduce(torch.zeros(2)),
                 "different collectives on different ranks")
    works_after("different collectives")
    # the check before the data (default, torch's order) and alongside it (pg._check_alongside: all_reduce,
    # broadcast and reduce start their data first): every way their operations can differ ends in the
    # error on every rank, none waits forever, and the group goes on working
    for alongside in (False, True):
        pg._check_alongside = alongside
        # as many elements in other shapes (alongside: the same MPI operation, it completes first)
        six = torch.ones((2, 3) if r == 0 else (3, 2))
        expect_error(RuntimeError, ["Detected mismatch between collectives", "shape=[2, 3]", "shape=[3, 2]"],
                     lambda: dist.all_reduce(six), "6 elements, 2 shapes")
        # the check first (the default, as torch's): the tensor is as it was. Alongside: the data ran
        close(six, np.full(six.shape, n if alongside else 1), "the tensor after a mismatch of equal sizes")
        works_after("6 elements in two shapes")
        # counts that differ, by far (MPICH would complete them silently with a wrong sum)
        expect_error(RuntimeError, ["Detected mismatch between collectives", "shape=[1000]", "shape=[300000]"],
                     lambda: dist.all_reduce(torch.ones(1000 if r == 0 else 300000)), "all_reduce counts differ")
        works_after("all_reduce counts that differ")
        # roots that differ (MPI's broadcasts would wait for each other forever)
        expect_error(RuntimeError, ["Detected mismatch between collectives", "root=0", "root=1"],
                     lambda: dist.broadcast(torch.ones(5000), src=0 if r == 0 else 1), "broadcast roots differ")
        works_after("broadcast roots that differ")
        expect_error(RuntimeError, ["Detected mismatch between collectives", "op=SUM", "op=MAX"],
                     lambda: dist.reduce(torch.ones(3), dst=0, op=dist.ReduceOp.SUM if r == 0 else dist.ReduceOp.MAX),
                     "reduce ops differ")
        works_after("reduce ops that differ")
        # a collective whose check runs first (all_gather) against one that already started (all_reduce)
        expect_error(RuntimeError, ["Detected mismatch between collectives", "all_gather(", "all_reduce("],
                     lambda: dist.all_gather([torch.zeros(2) for _ in range(n)], torch.zeros(2)) if r == 0
                     else dist.all_reduce(torch.zeros(2)), "all_gather against all_reduce")
        works_after("all_gather against all_reduce")
        # async_op: the check's answer is in before the Work is handed back
        expect_error(RuntimeError, ["Detected mismatch between collectives", "shape=[2]", "shape=[3]"],
                     lambda: dist.all_reduce(torch.zeros(2 + (r == 1)), async_op=True), "async all_reduce mismatch")
        works_after("an async mismatch")
    pg._check_alongside = False
    expect_error(TypeError, ["Invalid function argument", "tensor"], lambda: dist.all_reduce([1.0]), "a list")
    expect_error(ValueError, ["one tensor per rank"], lambda: dist.all_gather([torch.zeros(2)], torch.zeros(2)),
                 "all_gather list length")
    dist.barrier()
