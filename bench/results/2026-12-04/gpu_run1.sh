set -x
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv
python bench/gemm_gpu.py .gpu/sk_nn 3 > $OUT/sk_nn.txt 2>&1; tail -30 $OUT/sk_nn.txt
python bench/gemm_gpu.py .gpu/sk_nt 3 --nt > $OUT/sk_nt.txt 2>&1; tail -8 $OUT/sk_nt.txt
python bench/gemm_gpu.py .gpu/new/small_nn 3 > $OUT/small_nn.txt 2>&1; tail -30 $OUT/small_nn.txt
