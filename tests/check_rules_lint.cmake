# `logrx rules lint` on tests/data/lint_cases: exit 2 and exactly the expected
# diagnostics (file:line:col, code, rule id, JSON pointer).
execute_process(COMMAND ${LOGRX} rules lint --no-builtin-rules lint_cases
                WORKING_DIRECTORY ${DATA}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${code}\n${out}${err}")
endif()
file(READ ${DATA}/lint_cases.expected.txt expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "lint output differs.\nexpected:\n${expected}\nactual:\n${out}")
endif()
