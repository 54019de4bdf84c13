# Installs logrx into a temporary prefix, then builds and runs a C++ program
# (find_package) and a C program (pkg-config) against it.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "install failed: ${err}")
endif()
# A sanitizer build installs instrumented code: its consumers must link the
# sanitizer runtimes too.
set(extra_flags "")
if(SANITIZE)
  set(extra_flags -fsanitize=address,undefined)
endif()
string(REPLACE ";" " " extra_flags_string "${extra_flags}")
set(log "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.8\n")
# Nothing points at the rules: the C++ program (static library, in a folder
# of its own) uses the rulebook compiled into it, the C program the one
# installed next to liblogrx.so.
unset(ENV{LOGRX_BUILTIN_RULES})
unset(ENV{LOGRX_RULES_PATH})

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer -B ${WORK}/cxx
                        -DCMAKE_PREFIX_PATH=${WORK}/prefix
                        "-DCMAKE_CXX_FLAGS=${extra_flags_string}"
                        "-DCMAKE_EXE_LINKER_FLAGS=${extra_flags_string}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "consumer configure failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/cxx RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "consumer build failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${WORK}/cxx/consumer "${log}" RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 0 OR NOT out MATCHES "--mem-fraction-static 0.85" OR NOT out MATCHES "findings 1"
   OR NOT out MATCHES "rules from builtin:rules/")
  message(FATAL_ERROR "C++ consumer: exit ${code}\n${out}")
endif()

set(ENV{PKG_CONFIG_PATH} ${WORK}/prefix/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs logrx OUTPUT_VARIABLE flags RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find logrx")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND cc -std=c99 -Wall -Werror ${extra_flags} ${SOURCE}/tests/consumer/main.c ${flags} -o ${WORK}/c_consumer
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "C consumer build failed:\n${err}")
endif()
set(ENV{LD_LIBRARY_PATH} ${WORK}/prefix/lib)
execute_process(COMMAND ${WORK}/c_consumer "${log}" RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "findings 1 report ok budget ok"
   OR NOT out MATCHES "rules from ${WORK}/prefix/lib/../share/logrx/rules|rules from ${WORK}/prefix/share/logrx/rules")
  message(FATAL_ERROR "C consumer: exit ${code}\n${out}${err}")
endif()
file(REMOVE_RECURSE ${WORK})
