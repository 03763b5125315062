#!/usr/bin/env bash
# The one-shot GPU check of issue 15 (tools/gpu_check.py says what it runs): install CuPy and torch,
# run the op registry's tests on CUDA and the GPU benchmarks, print one summary. Exit status 0 only
# when everything ran on a GPU and passed; 2 when there is no GPU (CUDA unverified).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" tools/gpu_check.py "$@"
