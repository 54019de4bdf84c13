# A logrx program copied anywhere, with no rules on disk next to it, runs on
# the rulebook compiled into it; user rulebooks and $LOGRX_BUILTIN_RULES
# still add or replace rules.
unset(ENV{LOGRX_BUILTIN_RULES})
unset(ENV{LOGRX_RULES_PATH})
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/elsewhere)
file(COPY ${LOGRX_BUILT} DESTINATION ${WORK}/elsewhere)
get_filename_component(name ${LOGRX_BUILT} NAME)
set(LOGRX ${WORK}/elsewhere/${name})

execute_process(COMMAND ${LOGRX} scan --format json --fail-on never ${LOG}
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"rule\": \"sglang.memory.not-enough-memory\""
   OR NOT out MATCHES "--mem-fraction-static")
  message(FATAL_ERROR "copied logrx did not diagnose the log: exit ${code}\n${err}\n${out}")
endif()

# The rules come from the embedded copy, named by their place in the source tree.
execute_process(COMMAND ${LOGRX} rules list --format json
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"file\": \"builtin:rules/sglang/memory.json\"")
  message(FATAL_ERROR "copied logrx: rules not from the embedded copy: ${code}\n${err}")
endif()
execute_process(COMMAND ${LOGRX} rules test RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 0 OR NOT out MATCHES " 0 failed")
  message(FATAL_ERROR "embedded rulebook examples fail:\n${out}")
endif()
execute_process(COMMAND ${LOGRX} rules lint RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "embedded rulebook lint fails:\n${out}")
endif()

# --rules and $LOGRX_RULES_PATH replace and add rules on top of it.
include(${CMAKE_CURRENT_LIST_DIR}/check_user_rules.cmake)

# $LOGRX_BUILTIN_RULES replaces the built-in rulebook as a whole.
execute_process(COMMAND ${CMAKE_COMMAND} -E env LOGRX_BUILTIN_RULES=${RULES} ${LOGRX} rules list
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "site.disk.full" OR NOT out MATCHES "\n2 rules\n")
  message(FATAL_ERROR "LOGRX_BUILTIN_RULES did not replace the built-in rulebook: ${code}\n${err}\n${out}")
endif()
file(REMOVE_RECURSE ${WORK})
