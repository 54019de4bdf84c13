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
#   orphan          leaves a grandchild holding stdout (its pid in ./grandchild.pid), exits 1
#   ignore-term     ready, then ignores SIGTERM (touches ./started)
#   fatal-then-hang the scenario-1 error, then hangs while --mem-fraction-static < 0.85
#   closed-stdio    closes stdout and stderr, touches ./started, waits; SIGTERM -> ./got-term
#   fds             prints "FD n" for each open descriptor
#   spec-oom        speculative decoding: checks argv like argparse (exit 2 on a bad one),
#                   start-up pool failure below 0.88, CUDA graph capture OOM above
#                   --cuda-graph-max-bs 64, ready otherwise
all_args="$*"
mode=fail-then-heal
fraction=0.8
strategy=auto
code=0
bs=160
max_running=
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) mode=${2:-}; [ $# -ge 2 ] && shift ;;
    --mem-fraction-static) fraction=${2:-}; [ $# -ge 2 ] && shift ;;
    --mem-fraction-static=*) fraction=${1#*=} ;;
    --code) code=${2:-}; [ $# -ge 2 ] && shift ;;
    --mamba-scheduler-strategy) strategy=${2:-}; [ $# -ge 2 ] && shift ;;
    --cuda-graph-max-bs) bs=${2:-}; [ $# -ge 2 ] && shift ;;
    --max-running-requests) max_running=${2:-}; [ $# -ge 2 ] && shift ;;
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

# Like argparse: a value flag needs a value of its type, unknown flags fail.
check_argv() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --mode|--model-path|--speculative-algorithm|--kv-cache-dtype)
        [ $# -ge 2 ] && [ "${2#--}" = "$2" ] || { argv_error "$1" "expected one argument"; return 1; }
        shift ;;
      --mem-fraction-static)
        [ $# -ge 2 ] && awk "BEGIN { exit !(\"$2\" + 0 > 0 && \"$2\" + 0 < 1) }" ||
          { argv_error "$1" "invalid value '${2:-}'"; return 1; }
        shift ;;
      --max-running-requests|--cuda-graph-max-bs|--tp-size|--chunked-prefill-size|--context-length)
        case "${2:-}" in ''|*[!0-9]*|0) argv_error "$1" "expected one argument"; return 1 ;; esac
        shift ;;
      --disable-cuda-graph|--enable-torch-compile) ;;
      *) argv_error "$1" "unrecognized arguments"; return 1 ;;
    esac
    shift
  done
}
argv_error() {
  echo "ARGV-INVALID $1"
  echo "launch_server.py: error: argument $1: $2" >&2
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
  orphan)
    sleep 1000 &
    echo $! > grandchild.pid
    echo "[$(now)] scheduler started"
    exit 1 ;;
  ignore-term)
    trap '' TERM
    healthy
    touch started
    while :; do sleep 0.1; done ;;
  fatal-then-hang)
    if awk "BEGIN { exit !($fraction < 0.85) }"; then
      failure
      while :; do sleep 0.1; done
    fi
    healthy ;;
  closed-stdio)
    trap 'touch got-term; exit 143' TERM
    exec >&- 2>&-
    touch started
    while :; do sleep 0.1; done ;;
  fds)
    for fd in /proc/$$/fd/*; do echo "FD ${fd##*/}"; done ;;
  spec-oom)
    # shellcheck disable=SC2086
    check_argv $all_args || exit 2
    echo "[$(now)] server_args=ServerArgs(model_path='fake/model', mem_fraction_static=$fraction, cuda_graph_max_bs=$bs, speculative_algorithm='EAGLE', tp_size=1)"
    [ -n "$max_running" ] || echo "[$(now)] Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting --max-running-requests."
    echo "[$(now)] Load weight begin. avail mem=93.87 GB"
    if awk "BEGIN { exit !($fraction < 0.88) }"; then
      echo "[$(now)] Scheduler hit an exception: Traceback (most recent call last):" >&2
      echo "  File \"model_runner.py\", line 402, in init_memory_pool" >&2
      echo "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=$fraction" >&2
      exit 1
    fi
    if [ "$bs" -gt 64 ]; then
      echo "[$(now)] Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 94.97 GiB of which 1.02 GiB is free." >&2
      exit 1
    fi
    echo "[$(now)] KV Cache is allocated. #tokens: 100000, K size: 6.00 GB, V size: 6.00 GB"
    echo "[$(now)] The server is fired up and ready to roll!" ;;
  binary)
    printf 'raw \000\377\376 bytes \033[31mred\033[0m\r\n'
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "x" }' ;;
esac
exit 0
