test -d /tmp/site || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $(ls .whl/*.whl | grep -v emjax-)
export PYTHONPATH=/tmp/site:$PWD/src
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/gpu.txt
date -u > $OUT/date.txt
timeout 170 python benchmarks/fdfd_precond_variants.py 96 > $OUT/fdfd96.txt 2>&1
timeout 80 python benchmarks/fdfd_precond_variants.py head einsum planar planar:c64 minor:c64 planar:c64:high > $OUT/fdfdhead.txt 2>&1
OUT=$OUT timeout 200 python benchmarks/dga_kernel_choice.py cylinder-cavity 0.87e6 -- xla pallas auto > $OUT/dgachoice1.txt 2>&1
timeout 100 python benchmarks/fdfd_precond_variants.py 128 einsum planar minor:c64 planar:c64 planar:c64:high > $OUT/fdfd128.txt 2>&1
