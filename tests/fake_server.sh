#!/bin/sh
# A scripted stand-in for an SGLang server, for the `logrx run` tests. It
# prints its argv and environment, then a log chosen by --mode:
#   fail-then-heal  the scenario-1 failure while --mem-fraction-static < 0.85,
#                   a healthy start once it is high enough (the default)
#   always-fail     the failure whatever the flags
#   spec-conflict   the speculative/radix conflict until run with
#                   --mamba-scheduler-strategy extra_buffer and SGLANG_ENABLE_SPEC_V2=1
#   serve           a healthy start, then waits for SIGTERM/SIGINT
#   exit N          exits with status N
#   silent          prints nothing for 3 seconds
#   silent-death    starts loading, then dies by SIGKILL without an error
#   binary          writes raw bytes and a 100,000-byte line without newline
all_args="$*"
mode=fail-then-heal
fraction=0.8
strategy=auto
code=0
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) mode=$2; shift ;;
    --mem-fraction-static) fraction=$2; shift ;;
    --mem-fraction-static=*) fraction=${1#*=} ;;
    --code) code=$2; shift ;;
    --mamba-scheduler-strategy) strategy=$2; shift ;;
  esac
  shift
done
now() { date '+%Y-%m-%d %H:%M:%S'; }
healthy() {
  echo "[$(now)] server_args=ServerArgs(model_path='fake/model', mem_fraction_static=$fraction, tp_size=1)"
  echo "[$(now)] Load weight begin. avail mem=93.87 GB"
  echo "[$(now)] Load weight end. elapsed=1.00 s, type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=78.00 GB, mem usage=15.87 GB."
  echo "[$(now)] KV Cache is allocated. #tokens: 100000, K size: 6.00 GB, V size: 6.00 GB"
  echo "[$(now)] The server is fired up and ready to roll!"
}
failure() {
  echo "[$(now)] server_args=ServerArgs(model_path='fake/model', mem_fraction_static=$fraction, tp_size=1)"
  echo "[$(now)] Load weight begin. avail mem=93.87 GB"
  echo "[$(now)] Scheduler hit an exception: Traceback (most recent call last):" >&2
  echo "  File \"model_runner.py\", line 402, in init_memory_pool" >&2
  echo "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=$fraction" >&2
  echo "[$(now)] Received sigquit from a child process. It usually means the child failed." >&2
}

if [ "$mode" != silent ]; then
  echo "ARGS: $all_args"
  echo "ENV SGLANG_ENABLE_SPEC_V2=${SGLANG_ENABLE_SPEC_V2:-unset} PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-unset}"
fi
case "$mode" in
  fail-then-heal)
    if awk "BEGIN { exit !($fraction < 0.85) }"; then failure; exit 1; fi
    healthy ;;
  always-fail) failure; exit 1 ;;
  spec-conflict)
    if [ "$strategy" = extra_buffer ] && [ "${SGLANG_ENABLE_SPEC_V2:-}" = 1 ]; then healthy; exit 0; fi
    echo "ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache when using --mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1." >&2
    exit 1 ;;
  serve)
    trap 'echo "got SIGTERM"; exit 143' TERM
    trap 'echo "got SIGINT"; exit 130' INT
    healthy
    while :; do sleep 0.1; done ;;
  exit) echo "exiting with $code"; exit "$code" ;;
  silent) sleep 3 ;;
  silent-death)
    echo "[$(now)] server_args=ServerArgs(model_path='fake/model', mem_fraction_static=$fraction)"
    echo "[$(now)] Load weight begin. avail mem=93.87 GB"
    kill -9 $$ ;;
  binary)
    printf 'raw \000\377\376 bytes \033[31mred\033[0m\r\n'
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "x" }' ;;
esac
exit 0
