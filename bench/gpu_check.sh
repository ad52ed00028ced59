#!/usr/bin/env bash
# One command, at most 4 minutes on one H100-class GPU: executes the coop and exact plans of
# unet and bert-large at ratio 0.5 on CUDA (plans made beforehand on CPU by
# `python bench/gpu_check.py --make-plans`, kept in results/gpu-check/plans/) and prints
# max_memory_allocated against the budget, time against eager, and bitwise equality.
set -euo pipefail
cd "$(dirname "$0")/.."
exec timeout 240 python bench/gpu_check.py "$@"
