# `logrx scan` with no file (and with '-') reads stdin.
foreach(args "scan;--format;json" "scan;--format;json;-")
  execute_process(COMMAND ${LOGRX} ${args} INPUT_FILE ${INPUT}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 1)
    message(FATAL_ERROR "expected exit 1 for a fatal finding, got ${code}: ${err}")
  endif()
  if(NOT out MATCHES "\"file\": \"<stdin>\"" OR NOT out MATCHES "sglang.config.spec-radix-no-buffer")
    message(FATAL_ERROR "unexpected output:\n${out}")
  endif()
endforeach()
