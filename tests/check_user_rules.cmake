# A user rulebook (--rules or $LOGRX_RULES_PATH) replaces built-in rules by id
# and adds its own.
set(log "${WORK}/user-rules.log")
file(WRITE ${log} "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\nOSError: [Errno 28] No space left on device\n")
foreach(mode flag env)
  if(mode STREQUAL "flag")
    set(cmd ${LOGRX} scan --format json --fail-on never --rules ${RULES} ${log})
  else()
    set(cmd ${CMAKE_COMMAND} -E env LOGRX_RULES_PATH=/nonexistent-is-an-error-so-not-used:${RULES}
            ${LOGRX} scan --format json --fail-on never ${log})
    # A missing directory in the path is an error like any other rule source.
    execute_process(COMMAND ${cmd} RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT code EQUAL 2 OR NOT err MATCHES "rule source does not exist")
      message(FATAL_ERROR "a missing LOGRX_RULES_PATH entry must fail: ${code} ${err}")
    endif()
    set(cmd ${CMAKE_COMMAND} -E env LOGRX_RULES_PATH=${RULES} ${LOGRX} scan --format json --fail-on never ${log})
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${mode}: exit ${code}: ${err}")
  endif()
  if(NOT out MATCHES "Site override: KV pool does not fit" OR NOT out MATCHES "site.disk.full"
     OR out MATCHES "Not enough GPU memory left")
    message(FATAL_ERROR "${mode}: user rules not applied:\n${out}")
  endif()
endforeach()
