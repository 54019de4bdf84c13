# Runs `logrx scan --format json` on corpus/<case>.log (from the source root,
# so paths in the output are stable; with --year 2026, so that timestamps that
# print no year do not depend on the clone's date) and compares with
# <case>.expected.json.
# LOGRX_UPDATE_GOLDEN=1 in the environment rewrites the expected file instead.
set(log "${CASE}.log")
set(expected "${SOURCE}/${CASE}.expected.json")
set(extra_args "")
if(EXISTS "${SOURCE}/${CASE}.args")
  file(STRINGS "${SOURCE}/${CASE}.args" extra_args)
endif()
execute_process(
  COMMAND ${LOGRX} scan --format json --year 2026 ${extra_args} ${log}
  WORKING_DIRECTORY ${SOURCE}
  RESULT_VARIABLE code
  OUTPUT_VARIABLE actual
  ERROR_VARIABLE errors)
if(NOT code EQUAL 0 AND NOT code EQUAL 1)
  message(FATAL_ERROR "logrx exited with ${code}:\n${errors}")
endif()
if("$ENV{LOGRX_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE "${expected}" "${actual}")
  message(STATUS "updated ${expected}")
  return()
endif()
if(NOT EXISTS "${expected}")
  message(FATAL_ERROR "no golden file ${expected}; run with LOGRX_UPDATE_GOLDEN=1 and review it")
endif()
file(READ "${expected}" golden)
if(NOT actual STREQUAL golden)
  string(RANDOM LENGTH 8 tag)
  set(actual_file "${CMAKE_CURRENT_BINARY_DIR}/corpus-actual-${tag}.json")
  file(WRITE "${actual_file}" "${actual}")
  execute_process(COMMAND diff -u "${expected}" "${actual_file}" OUTPUT_VARIABLE diff)
  message(FATAL_ERROR "output differs from ${expected}:\n${diff}")
endif()
