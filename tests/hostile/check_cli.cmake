# Hostile input through the CLI: each case must end with a clear result or a
# clear error (exit 0, 1 or 2, never a signal), in bounded memory.
#   -DLOGRX=... -DPEAK=logrx-peak-rss -DWORK=dir -DCASE=name [-DLIMIT_KB=n]
# LIMIT_KB (0 under sanitizers) is both the address-space limit and the
# switch for peak-RSS assertions.
file(MAKE_DIRECTORY ${WORK})
string(ASCII 27 esc)
string(ASCII 7 bel)

if(NOT DEFINED LIMIT_KB)
  set(LIMIT_KB 0)
endif()

# Runs logrx under an address-space limit of LIMIT_KB (none when 0, as under
# AddressSanitizer, which reserves terabytes of address space); sets
# peak_kb and cpu_us in the caller to the run's peak RSS and CPU time.
function(run_logrx out_code out_stdout out_stderr)
  string(REPLACE ";" " " args "${ARGN}")
  execute_process(COMMAND sh -c "exec \"${PEAK}\" ${LIMIT_KB} \"${WORK}/peak\" \"${LOGRX}\" ${args}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(READ ${WORK}/peak usage)
  string(REGEX MATCH "^([0-9]+) ([0-9]+)" _ "${usage}")
  set(peak_kb ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(cpu_us ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${out_code} ${code} PARENT_SCOPE)
  set(${out_stdout} "${out}" PARENT_SCOPE)
  set(${out_stderr} "${err}" PARENT_SCOPE)
endfunction()

# Fails when the last run's peak RSS exceeded MAX_KB (only measured outside
# sanitizer builds, whose shadow memory would dominate).
function(expect_peak_below max_kb what)
  if(LIMIT_KB GREATER 0 AND peak_kb GREATER ${max_kb})
    message(FATAL_ERROR "${CASE}: ${what}: peak RSS ${peak_kb} KB, over ${max_kb} KB")
  endif()
  message(STATUS "${CASE}: ${what}: peak RSS ${peak_kb} KB")
endfunction()

function(expect_clean_exit code err)
  if(NOT code MATCHES "^[012]$")
    message(FATAL_ERROR "${CASE}: logrx ended with '${code}'\n${err}")
  endif()
endfunction()

if(CASE STREQUAL "random-binary")
  execute_process(COMMAND sh -c "head -c 20000000 /dev/urandom > ${WORK}/random.bin")
  run_logrx(code out err scan --format json ${WORK}/random.bin)
  expect_clean_exit("${code}" "${err}")
  string(JSON lines GET "${out}" summary lines)
elseif(CASE STREQUAL "huge-line")
  # 100 MB without a newline, then one real error line.
  execute_process(COMMAND sh -c "head -c 100000000 /dev/zero | tr '\\\\0' 'a' > ${WORK}/huge.log && printf '\\nRuntimeError: CUDA error: out of memory\\n' >> ${WORK}/huge.log")
  run_logrx(code out err scan --format json ${WORK}/huge.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON lines GET "${out}" summary lines)
  string(JSON cut GET "${out}" summary truncated_lines)
  string(JSON rule GET "${out}" findings 0 rule)
  if(NOT lines EQUAL 2 OR NOT cut EQUAL 1 OR NOT rule STREQUAL "pytorch.cuda.error-out-of-memory")
    message(FATAL_ERROR "huge line: lines=${lines} truncated=${cut} rule=${rule}")
  endif()
elseif(CASE STREQUAL "bad-bytes")
  # NUL bytes, invalid and overlong UTF-8, ANSI and OSC sequences.
  execute_process(COMMAND sh -c "printf 'RuntimeError: CUDA error: out of memory \\000\\377\\300\\257 ${esc}[31mred${esc}[0m ${esc}]0;title${bel} ${esc}]8;;http://x${esc}\\\\\\\\link\\n' > ${WORK}/bad.log")
  run_logrx(code out err scan --format json ${WORK}/bad.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON message GET "${out}" findings 0 message)
  string(FIND "${message}" "${esc}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "bad bytes: escape sequence kept in ${message}")
  endif()
  run_logrx(code out err scan --color never ${WORK}/bad.log)
  string(FIND "${out}" "${esc}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "bad bytes: raw ESC reached the text output:\n${out}")
  endif()
elseif(CASE STREQUAL "many-distinct-findings")
  # 300,000 different matching lines: findings are capped, all are counted.
  execute_process(COMMAND sh -c "i=0; awk 'BEGIN { for (i = 0; i < 300000; i++) printf \"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB x%s.\\n\", sprintf(\"%c%c%c\", 97 + i % 26, 97 + int(i / 26) % 26, 97 + int(i / 676) % 26) }' > ${WORK}/many.log")
  run_logrx(code out err scan --format json --brief ${WORK}/many.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON total GET "${out}" summary findings)
  string(JSON dropped GET "${out}" summary findings_dropped)
  if(total LESS 10000 OR dropped LESS 1)
    message(FATAL_ERROR "many findings: total=${total} dropped=${dropped}")
  endif()
elseif(CASE STREQUAL "unreadable")
  file(CREATE_LINK ${WORK}/does-not-exist ${WORK}/dangling.log SYMBOLIC)
  file(MAKE_DIRECTORY ${WORK}/empty)
  run_logrx(code out err scan ${WORK}/dangling.log ${WORK}/empty /nonexistent/server.log)
  if(NOT code EQUAL 2 OR NOT err MATCHES "dangling.log" OR NOT err MATCHES "empty: directory holds no file"
     OR NOT err MATCHES "/nonexistent/server.log")
    message(FATAL_ERROR "unreadable inputs: exit ${code}\n${err}")
  endif()
elseif(CASE STREQUAL "closed-stdout")
  execute_process(COMMAND sh -c "awk 'BEGIN { for (i = 0; i < 200000; i++) print \"RuntimeError: CUDA error: out of memory\" }' > ${WORK}/closed.log")
  execute_process(COMMAND bash -c "\"${LOGRX}\" scan --format json ${WORK}/closed.log | head -c 10 > /dev/null; echo \${PIPESTATUS[0]}"
                  OUTPUT_VARIABLE status ERROR_VARIABLE err)
  string(STRIP "${status}" status)
  if(NOT status MATCHES "^[012]$" OR NOT err STREQUAL "")
    message(FATAL_ERROR "closed stdout: status '${status}' stderr '${err}'")
  endif()
elseif(CASE STREQUAL "config-dump-crash")
  # The depth guard and the grammar once disagreed on `'` and `]` inside
  # <...>: 65,000 '[' after them were recursed into (SIGSEGV).
  string(REPEAT "[" 65000 deep)
  file(WRITE ${WORK}/dump.log
       "[2026-05-23 07:40:41] server_args=ServerArgs(a=<'>, b=${deep})\n"
       "[2026-05-23 07:40:42] server_args=ServerArgs(a=<]]]>, b=${deep})\n"
       "INFO 05-23 07:40:43 [utils.py:1] non-default args: {'a': <'>, 'b': ${deep}}\n"
       "INFO 05-23 07:40:44 [core.py:58] Initializing a V1 LLM engine (v0.9.0) with config: model='m', a=<'>, b=${deep}\n")
  run_logrx(code out err scan --format json ${WORK}/dump.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON count LENGTH "${out}" diagnostics)
  if(NOT count EQUAL 4)
    message(FATAL_ERROR "config dumps: ${count} diagnostics\n${out}")
  endif()
  expect_peak_below(65536 "deep config dumps")
elseif(CASE STREQUAL "rules-not-regular")
  # /dev/zero reports size 0 and never ends; a FIFO without a writer blocks
  # open(): both are refused as not regular files, exit 2.
  execute_process(COMMAND mkfifo ${WORK}/rules.fifo)
  foreach(source /dev/zero ${WORK}/rules.fifo)
    run_logrx(code out err scan --rules ${source} /dev/null)
    if(NOT code EQUAL 2 OR NOT err MATCHES "not a regular file")
      message(FATAL_ERROR "--rules ${source}: exit ${code}\n${err}")
    endif()
    run_logrx(code out err rules lint ${source})
    if(NOT code EQUAL 2 OR NOT "${out}${err}" MATCHES "not a regular file")
      message(FATAL_ERROR "rules lint ${source}: exit ${code}\n${err}")
    endif()
  endforeach()
  expect_peak_below(65536 "refused rule sources")
elseif(CASE STREQUAL "rules-long-key")
  # A rule file with an error maps JSON pointers to positions; a 200 KB key
  # over 8,000 children was once copied into each child's path (GBs).
  string(REPEAT "k" 200000 key)
  string(REPEAT "{\"a\": [0]}," 8000 children)
  file(WRITE ${WORK}/long-key.json "{\"rules\": [{\"id\": \"Bad ID\", \"${key}\": [${children} 0]}]}")
  run_logrx(code out err rules lint --no-builtin-rules --rules ${WORK}/long-key.json)
  if(NOT code EQUAL 2 OR NOT "${out}${err}" MATCHES "rule.bad-id")
    message(FATAL_ERROR "long key: exit ${code}\n${err}")
  endif()
  expect_peak_below(65536 "a long key over many children")
elseif(CASE STREQUAL "shuffled-times")
  # 200,000 serving lines whose times are shuffled (a merged or clock-skewed
  # log): one run, the jump noted once, no "died before ready" per jump; and
  # an ordinary serving log fits in 32 MB.
  execute_process(COMMAND sh -c "awk 'BEGIN { srand(7); print \"[2026-05-23 07:00:00] server_args=ServerArgs(model_path=\\x27m\\x27, tp_size=1)\"; for (i = 0; i < 200000; i++) { s = int(rand() * 36000); printf \"[2026-05-23 %02d:%02d:%02d] Decode batch. #running-req: 1, #token: %d, gen throughput (token/s): 40.1, #queue-req: 0\\n\", 8 + int(s / 3600), int(s / 60) % 60, s % 60, i } }' > ${WORK}/shuffled.log")
  run_logrx(code out err scan --format json ${WORK}/shuffled.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON runs GET "${out}" summary runs)
  string(JSON findings GET "${out}" summary findings)
  string(JSON diagnostics LENGTH "${out}" diagnostics)
  string(JSON note GET "${out}" diagnostics 0 message)
  if(NOT runs EQUAL 1 OR NOT diagnostics EQUAL 1 OR NOT note MATCHES "timestamps go back" OR findings GREATER 2)
    message(FATAL_ERROR "shuffled times: runs=${runs} findings=${findings} diagnostics=${diagnostics}")
  endif()
  # The compiled rulebook alone is ~27 MB resident (`logrx --version` loads it);
  # RE2's lazily built DFA caches add ~7 MB by 50,000 lines and then stay flat.
  expect_peak_below(40960 "an ordinary serving log of 200,000 lines")
elseif(CASE STREQUAL "two-launches")
  # `cat a.log b.log` of two real launches is still two runs.
  execute_process(COMMAND sh -c "cat ${SOURCE}/corpus/sglang/healthy-start-llama8b.log ${SOURCE}/corpus/sglang/healthy-start-llama8b.log > ${WORK}/two.log")
  run_logrx(code out err scan --format json ${WORK}/two.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON runs GET "${out}" summary runs)
  if(NOT runs EQUAL 2)
    message(FATAL_ERROR "two launches: ${runs} runs")
  endif()
elseif(CASE STREQUAL "many-diagnostics")
  # 20,000 config dumps that do not parse: diagnostics are capped and counted.
  execute_process(COMMAND sh -c "awk 'BEGIN { for (i = 0; i < 20000; i++) printf \"[2026-05-23 07:40:41] server_args=ServerArgs(a=[%d\\n\", i }' > ${WORK}/dumps.log")
  run_logrx(code out err scan --format json ${WORK}/dumps.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON kept LENGTH "${out}" diagnostics)
  string(JSON capped GET "${out}" summary capped diagnostics)
  if(NOT kept EQUAL 1000 OR capped LESS 18000)
    message(FATAL_ERROR "many diagnostics: kept ${kept}, capped ${capped}")
  endif()
  expect_peak_below(131072 "20,000 unparsable dumps")
elseif(CASE STREQUAL "linear-ranks")
  # The same error from ever more ranks: merging is linear. 4x the input
  # must cost well under 16x (quadratic) the CPU time; the bound is a ratio
  # with room for noise, not a timing.
  foreach(n 20000 80000)
    execute_process(COMMAND sh -c "awk 'BEGIN { for (i = 0; i < ${n}; i++) printf \"[2026-05-23 07:40:41 TP%d] Scheduler hit an exception: RuntimeError: CUDA error: out of memory\\n\", i }' > ${WORK}/ranks-${n}.log")
    run_logrx(code out err scan --format json --brief ${WORK}/ranks-${n}.log)
    expect_clean_exit("${code}" "${err}")
    set(cpu_${n} ${cpu_us})
  endforeach()
  string(JSON capped GET "${out}" summary capped ranks)
  math(EXPR bound "${cpu_20000} * 10 + 200000")
  message(STATUS "ranks: ${cpu_20000} us for 20,000 lines, ${cpu_80000} us for 80,000; ${capped} ranks capped")
  if(cpu_80000 GREATER bound OR capped LESS 70000)
    message(FATAL_ERROR "ranks: 4x the lines took ${cpu_80000} us against ${cpu_20000} us (capped ${capped})")
  endif()
elseif(CASE STREQUAL "compression-bomb")
  # 22 KB of zstd that decode to 256 MiB of serving statistics: decoded in
  # pieces, never held; then corrupt and truncated data end with exit 2.
  if(LIMIT_KB GREATER 0)
    run_logrx(code out err scan --format json --brief ${SOURCE}/tests/data/compressed/bomb-256mib.zst)
    expect_clean_exit("${code}" "${err}")
    string(JSON lines GET "${out}" summary lines)
    string(JSON compression GET "${out}" summary compression)
    if(NOT compression STREQUAL "zstd" OR lines LESS 1900000)
      message(FATAL_ERROR "bomb: compression=${compression} lines=${lines}")
    endif()
    expect_peak_below(65536 "256 MiB decoded from 22 KB")
  endif()
  foreach(name corrupt.gz truncated.zst)
    run_logrx(code out err scan ${SOURCE}/tests/data/compressed/${name})
    if(NOT code EQUAL 2 OR NOT err MATCHES "${name}: ")
      message(FATAL_ERROR "${name}: exit ${code}, stderr: ${err}")
    endif()
  endforeach()
elseif(CASE STREQUAL "budget")
  # Nothing to budget is an input error, not an empty answer.
  run_logrx(code out err budget /dev/null)
  if(NOT code EQUAL 2 OR NOT err MATCHES "nothing to budget")
    message(FATAL_ERROR "budget /dev/null: exit ${code}\n${err}")
  endif()
  # A fraction no GPU has is refused before any arithmetic, and said so.
  file(WRITE ${WORK}/budget.log
       "[2026-06-02 14:05:12] server_args=ServerArgs(mem_fraction_static=1e300)\n"
       "[2026-06-02 14:06:34] max_total_num_tokens=77056, max_running_requests=4, context_len=262144, available_gpu_mem=30.12 GB\n")
  run_logrx(code out err budget --format json ${WORK}/budget.log)
  expect_clean_exit("${code}" "${err}")
  string(JSON rejected GET "${out}" rejected 0)
  string(JSON fraction GET "${out}" fraction)  # null reads as ""
  if(NOT code EQUAL 0 OR NOT rejected STREQUAL "mem_fraction_static=1e+300" OR NOT fraction STREQUAL "")
    message(FATAL_ERROR "hostile budget: exit ${code}\n${out}${err}")
  endif()
else()
  message(FATAL_ERROR "unknown case ${CASE}")
endif()
