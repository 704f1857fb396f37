# Session 30's fourth GPU run: the TileLang-form MLA program divided, then run 1's MLA set again
# (.gpu/s30: divided, undivided, ws). The first part ran tilelang_form.py, since folded into
# tilelang_variants.py (its `shared` variant: the same program, checks and timing); to rerun it:
#   python bench/results/2026-12-05/session30/tilelang_variants.py build .gpu/s30d
# carry .gpu/lib .gpu/s30 .gpu/s30d; bash bench/results/2026-12-05/session30/gpu_run4.sh
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
echo "== TileLang-form MLA"
timeout 200 python bench/results/2026-12-05/session30/tilelang_variants.py run .gpu/s30d 2>&1 | tee $OUT/tilelang_form.txt
echo "== mla (checks, then timing)"
timeout 330 python bench/mla_gpu.py .gpu/s30/mla 2>&1 | tee $OUT/mla.txt | grep -v " ok$"
