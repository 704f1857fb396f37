# Session 28's first GPU run: tile-order-warpgroups (the consumer warpgroups
# of a warp-specialized loop take turns at wgmma). Built here:
#   python bench/build_attention_pingpong.py .gpu/pp/bench   (each config with
#     and without turns, `_nopp`: tlc.disable_pingpong)
#   python bench/build_attention.py .gpu/pp/attention        (the 46 checks)
#   python test/gpu/families_check.py build .gpu/pp/families
#   carry .gpu; bash bench/results/2026-12-05/session28/gpu_run1.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
timeout 60 python test/gpu/run_artifacts.py .gpu/pp/attention > $OUT/attention_checks.txt 2>&1
echo "attention checks rc=$?"; grep -c ^PASS $OUT/attention_checks.txt; grep -v ^PASS $OUT/attention_checks.txt | head -8
timeout 240 python bench/attention_gpu.py .gpu/pp/bench 3 > $OUT/pingpong_bench.txt 2>&1
echo "bench rc=$?"; cat $OUT/pingpong_bench.txt
timeout 250 python test/gpu/families_check.py run .gpu/pp/families > $OUT/families.txt 2>&1
echo "families rc=$?"; grep -c ^PASS $OUT/families.txt; grep -v ^PASS $OUT/families.txt | head -20
