# A broken rulebook gives exit 2 and exactly the expected diagnostics (paths
# relative to the bad_rules directory, so the golden does not depend on where
# the source tree lives).
execute_process(COMMAND ${LOGRX} scan --no-builtin-rules --rules bad_rules /dev/null
                WORKING_DIRECTORY ${RULES}/..
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${code}\n${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "nothing may be scanned with a broken rulebook, got:\n${out}")
endif()
file(READ ${EXPECTED} expected)
if(NOT err STREQUAL expected)
  message(FATAL_ERROR "diagnostics differ.\nexpected:\n${expected}\nactual:\n${err}")
endif()
