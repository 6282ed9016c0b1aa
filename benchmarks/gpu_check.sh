#!/usr/bin/env bash
# The GPU check: verify on CUDA (float64, float32, bfloat16; the SDPA and FlexAttention paths), the tests
# marked gpu, and the reference's speed against HF transformers, written as OUTDIR/gpu_check.json.
#
#   bash benchmarks/gpu_check.sh OUTDIR [--dry-run]     # --dry-run: everything that needs no GPU
#
# The steps are in benchmarks/gpu_check.py; PYTHON chooses the interpreter (default: python3, the one that
# holds torch). Exit 0 when every step passed, 1 when one failed, 2 on bad usage.
set -euo pipefail
exec "${PYTHON:-python3}" "$(dirname "$0")/gpu_check.py" "$@"
