#!/bin/sh
# "ssh" for mpiexec (MPICH's hydra) in tests/test_distributed.py's two simulated machines: hydra runs
# `ssh -x HOST COMMAND` to start its proxy on HOST; this runs COMMAND in the network namespace of HOST
# (10.99.0.1 -> ${GLASSTORCH_TEST_NETNS}n0, 10.99.0.2 -> ...n1) under that node's host name, as ssh would
# run it on that machine (COMMAND arrives as words to be read by a shell, as ssh's remote shell does).
[ "$1" = "-x" ] && shift
host=$1
shift
node=$(( ${host##*.} - 1 ))
exec ip netns exec "${GLASSTORCH_TEST_NETNS}n$node" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "node$node" "$*"
