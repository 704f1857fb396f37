# Session 29's GPU runs: issue 9's scorecard and issue 10's MLA programs.
# Built here (no GPU needed):
#   python bench/results/2026-12-05/session29/build_scorecard.py .gpu/s29
#   python bench/build_mla.py .gpu/mla_all ws seesaw, of which .gpu/mla holds
#     the seesaw checks and the bench shapes b132 s8192 / s32768, b64 s8192 /
#     s1024, b8 s8192 split 8 (ws and seesaw), plus mla_decode.py's b132 s8192
#   cp build/python_packages/tlc/runtime/libtlc_runtime.so .gpu/lib/
# carry .gpu; bash bench/results/2026-12-05/session29/gpu_run.sh PART
#   PART: mla | gemm16 (fp16 NN and NT) | rest (bf16, small, decode, K-heavy, fp8, SASS)
#         | all (mla, the four 4096/8192 folders in 5 rounds, attention, then rest's others)
export TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
gemm() {  # folder [flag] [rounds]
  echo "== $1"
  timeout 130 python bench/gemm_gpu.py .gpu/s29/$1 ${3:-3} $2 2>&1 | tee $OUT/gemm_$1.txt
}
case "$1" in
mla)
  echo "== mla (checks, then timing)"
  timeout 280 python bench/mla_gpu.py .gpu/mla 2>&1 | tee $OUT/mla.txt | grep -v " ok$"
  grep -c " ok$" $OUT/mla.txt
  ;;
gemm16)
  gemm nn_float16; gemm nt_float16 --nt
  ;;
rest)
  gemm nn_bfloat16; gemm nt_bfloat16 --nt; gemm small_nn; gemm decode_nn; gemm decode_nt --nt
  gemm kheavy
  echo "== fp8"
  timeout 90 python bench/fp8_gemm_gpu.py .gpu/s29/fp8 3 2>&1 | tee $OUT/fp8.txt
  echo "== sass (cubins assembled by ptxas here)"
  for f in .gpu/s29/sass/*.cubin; do
    echo "-- $(basename $f)"
    cuobjdump -sass $f | grep -oE "UTMALDG[.A-Z0-9]*|UTMASTG[.A-Z0-9]*|HGMMA[.A-Z0-9]*|SYNCS[.A-Z0-9]*|USETMAXREG[.A-Z0-9]*" \
      | sort | uniq -c
  done 2>&1 | tee $OUT/sass.txt
  ;;
all)
  bash $0 mla
  gemm nn_float16 "" 5; gemm nt_float16 --nt 5; gemm nn_bfloat16 "" 5; gemm nt_bfloat16 --nt 5
  echo "== attention"
  timeout 150 python bench/attention_gpu.py .gpu/s29/attention 3 2>&1 | tee $OUT/attention.txt
  gemm small_nn; gemm decode_nn; gemm decode_nt --nt; gemm kheavy
  echo "== fp8"
  timeout 90 python bench/fp8_gemm_gpu.py .gpu/s29/fp8 3 2>&1 | tee $OUT/fp8.txt
  ;;
esac
# compute-sanitizer on two small seesaw checks (.gpu/san: mla_check_b3_p2_seesaw and
# mla_check_b4_p9_split2_seesaw, built by examples/mla_decode_seesaw.py's mla_decode_seesaw).
if [ "$1" = sanitizer ]; then
  for tool in racecheck synccheck memcheck; do
    echo "== compute-sanitizer $tool"
    timeout 170 compute-sanitizer --tool $tool python bench/mla_gpu.py .gpu/san 2>&1 | tail -4
  done 2>&1 | tee $OUT/sanitizer.txt
fi
