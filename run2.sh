test -d /tmp/site || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $(ls .whl/*.whl | grep -v emjax-)
export PYTHONPATH=/tmp/site:$PWD/src
date -u > $OUT/date.txt
HLO=$OUT/hlo timeout 100 python benchmarks/fdfd_precond_variants.py 96 einsum minor bcast minor:c64 bcast:c64 > $OUT/fdfd96.txt 2>&1
timeout 60 python benchmarks/fdfd_precond_variants.py 128 einsum minor bcast > $OUT/fdfd128.txt 2>&1
timeout 60 python benchmarks/fdfd_precond_variants.py head einsum minor bcast > $OUT/fdfdhead.txt 2>&1
OUT=$OUT timeout 280 python benchmarks/dga_kernel_choice.py .meshes/cyl035.vtu -- xla pallas auto > $OUT/dgachoice2.txt 2>&1
OUT=$OUT timeout 100 python benchmarks/dga_kernel_choice.py 2.7e6 -- xla pallas > $OUT/dgachoice3.txt 2>&1
