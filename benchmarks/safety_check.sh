#!/usr/bin/env bash
# Issue #19 on the GPU machine (device tool; .whl and old/ carried, old/ = `git archive
# OLD src`): (1) the driver's per-chunk guard against the tree before it, the same
# 512^3 run through `emjax run`, old and new alternating, twice; (2) every built-in
# scenario through `emjax run` at full length, with its figures. Logs and figures come
# back in $OUT/safety.tgz.
#   benchmarks/safety_check.sh
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site \
  $(ls .whl/*.whl | grep -v emjax-) 2>&1 | tail -2
export PYTHONUNBUFFERED=1
res=${OUT:-/tmp/out}/safety
mkdir -p "$res/builtins"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$res/gpu.txt"
git rev-parse --short HEAD > "$res/commit.txt" 2>/dev/null || true
pack() { tar czf "${OUT:-/tmp/out}/safety.tgz" -C "${OUT:-/tmp/out}" --exclude='*.h5' safety; }
for i in 1 2; do
  for tree in old src; do
    src=$tree; [[ $tree == old ]] && src=old/src
    t0=$(date +%s.%N)
    PYTHONPATH=/tmp/site:$PWD/$src python3 -m emjax.cli run benchmarks/guard-cube.toml \
      -o "/tmp/cube-$tree-$i.h5" --figures /tmp/fig-$tree-$i --no-progress \
      > "$res/cube-$tree-$i.log" 2>&1
    echo "cube $tree $i rc=$? $(grep -h 'speed\|wall' "$res/cube-$tree-$i.log" | tr '\n' ' ')"
  done
done | tee "$res/cube.txt"
pack
export PYTHONPATH=/tmp/site:$PWD/src
for name in $(python3 -c "from emjax.scenarios import builtin_names; print(*builtin_names())"); do
  t0=$(date +%s)
  timeout 300 python3 -m emjax.cli run "$name" -o "$res/builtins/$name.h5" \
    --figures "$res/builtins/fig" --no-progress > "$res/builtins/$name.log" 2>&1
  echo "$name rc=$? in $(( $(date +%s) - t0 )) s: $(grep -h 'wall time\|warning' "$res/builtins/$name.log" | tr '\n' ' ')"
  pack
done | tee "$res/builtins.txt"
pack
