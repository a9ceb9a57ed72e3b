#!/usr/bin/env bash
# Per-kernel profiles (Nsight Compute) and timings on the GPU machine, one case per
# argument: "time fdtd-mri 5 2" runs kernel_profile.py without ncu, "ncu cocg 96" under
# ncu, "py SCRIPT ARGS" any script; VAR=value words after the first set the environment
# of that case only ("time EMJAX_CPML_STRATEGY=per_face fdtd-mri-time 5"). CSV, HLO and
# logs come back
# in $OUT/prof.tgz. Carry .whl/ (make wheels).
set -uo pipefail
site=/tmp/site
python3 -m pip install -q --no-index --no-deps --target $site $(ls .whl/*.whl | grep -v emjax-) 2>&1 | tail -2
export PYTHONPATH=$site:$PWD/src
out=${OUT:-/tmp/out}/prof
mkdir -p "$out"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || true
n=0
for spec in "$@"; do
  n=$((n + 1))
  set -- $spec
  how=$1; shift
  envs=()
  while [[ ${1:-} == *=* ]]; do envs+=("$1"); shift; done
  tag=$(printf '%02d-%s' $n "$(echo "${envs[*]} $*" | tr ' /' '__' | sed 's/^_//')")
  start=$(date +%s)
  if [[ $how == py ]]; then
    env "${envs[@]}" timeout 300 python3 "$@" > "$out/$tag.log" 2>&1
  elif [[ $how == ncu ]]; then
    env "${envs[@]}" timeout 300 "$NCU" --profile-from-start off --clock-control none --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      --log-file "$out/$tag.csv" python3 benchmarks/kernel_profile.py "$@" > "$out/$tag.log" 2>&1
  else
    env "${envs[@]}" timeout 300 python3 benchmarks/kernel_profile.py "$@" > "$out/$tag.log" 2>&1
  fi
  echo "== $how ${envs[*]} $* rc=$? in $(( $(date +%s) - start )) s"; tail -2 "$out/$tag.log"
done
tar czf "${OUT:-/tmp/out}/prof.tgz" -C "${OUT:-/tmp/out}" prof && rm -rf "$out"
