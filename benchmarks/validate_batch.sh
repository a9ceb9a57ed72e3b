#!/usr/bin/env bash
# Run `emjax validate` cases one after another on the GPU machine (device tool) until a
# wall-clock budget is spent; each case's JSON records and log go into one tarball,
# $OUT/validate.tgz (the tool returns at most 8 files). Wheels from `make wheels` in .whl/.
#   benchmarks/validate_batch.sh SECONDS CASE [CASE ...]
set -uo pipefail
budget=$1; shift
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site \
  $(ls .whl/*.whl | grep -v emjax-) 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 EMJAX_FIGURES=/tmp/figs
res=${OUT:-/tmp/out}/validate
mkdir -p "$res" /tmp/figs
start=$(date +%s)
for case in "$@"; do
  left=$(( budget - ($(date +%s) - start) ))
  if (( left < 20 )); then echo "-- $case not started (budget spent)"; continue; fi
  t0=$(date +%s)
  timeout "$left" python3 -m emjax.cli validate "$case" --json > "$res/$case.json" 2> "$res/$case.log"
  rc=$?
  echo "== $case rc=$rc in $(( $(date +%s) - t0 )) s"
  tar czf "${OUT:-/tmp/out}/validate.tgz" -C "${OUT:-/tmp/out}" validate
done
