# Runs logrx with ARGS and checks its exit code and a piece of its stderr.
execute_process(COMMAND ${LOGRX} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "expected exit ${EXPECT_CODE}, got ${code}\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr lacks '${EXPECT_STDERR}':\n${err}")
endif()
