# `logrx budget --format json` on the healthy-but-starved B200 log.
execute_process(COMMAND ${LOGRX} budget --format json ${INPUT}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit ${code}: ${err}")
endif()
string(JSON free GET "${out}" free_gb)
string(JSON parts LENGTH "${out}" parts)
string(JSON first GET "${out}" parts 0 name)
string(JSON flag GET "${out}" remediation 0 flag)
string(JSON value GET "${out}" remediation 0 value)
if(NOT free MATCHES "^30\\.1[12]" OR NOT parts EQUAL 5 OR NOT first STREQUAL "weights"
   OR NOT flag STREQUAL "--max-running-requests" OR NOT value STREQUAL "17")
  message(FATAL_ERROR "unexpected budget:\n${out}")
endif()
