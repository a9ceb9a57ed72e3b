#!/usr/bin/env bash
# Run emjax commands on the GPU machine (device tool), one after another, each under its
# own time limit; JSON records, logs and figures come back in $OUT/batch.tgz.
#
# Usage (from the repo root, .whl/ carried):
#   benchmarks/device_batch.sh SECONDS "validate NAME" "[SECONDS] [VAR=value ...] bench NAME" ...
# Each argument is an `emjax` sub-command, optionally led by its own time limit and by
# environment settings; its stdout goes to <n>-<words>.json, its stderr to
# <n>-<words>.log. The wheels in .whl/ (make wheels) supply what the image lacks.
set -uo pipefail
limit=$1; shift
site=/tmp/site
python3 -m pip install -q --no-index --no-deps --target $site $(ls .whl/*.whl | grep -v emjax-) 2>&1 | tail -2
export PYTHONPATH=$site:$PWD/src
res=${OUT:-/tmp/out}/batch
mkdir -p "$res"
export EMJAX_FIGURES="$res"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$res/gpu.txt"
git rev-parse --short HEAD > "$res/commit.txt" 2>/dev/null || true
n=0
for cmd in "$@"; do
  n=$((n + 1))
  lim=$limit
  set -- $cmd
  if [[ $1 =~ ^[0-9]+$ ]]; then lim=$1; shift; fi
  envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  cmd="$*"
  tag=$(printf '%02d-%s' $n "$(echo "$cmd" | tr ' /' '__' | tr -cd 'A-Za-z0-9_.-')")
  start=$(date +%s)
  echo "== ${envs[*]} $cmd (limit ${lim}s)"
  env "${envs[@]}" timeout "$lim" python3 -m emjax.cli $cmd --json > "$res/$tag.json" 2> "$res/$tag.log"
  rc=$?
  echo "   rc=$rc in $(( $(date +%s) - start )) s"; tail -3 "$res/$tag.log"
done
tar czf "${OUT:-/tmp/out}/batch.tgz" -C "${OUT:-/tmp/out}" batch && rm -rf "$res"
