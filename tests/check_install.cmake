# `cmake --install` to a fresh prefix: the installed logrx finds its built-in
# rulebook relative to itself, with no environment help.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "install failed: ${err}")
endif()
if(NOT EXISTS ${PREFIX}/share/logrx/rules/sglang/memory.json)
  message(FATAL_ERROR "rulebook not installed under share/logrx/rules")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LOGRX_BUILTIN_RULES --unset=LOGRX_RULES_PATH
                        ${PREFIX}/bin/logrx rules list
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "sglang.memory.not-enough-memory")
  message(FATAL_ERROR "installed logrx did not find its rules: ${code}\n${err}")
endif()
# The installed copy is preferred to the compiled-in one (it can be updated
# without rebuilding).
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LOGRX_BUILTIN_RULES --unset=LOGRX_RULES_PATH
                        ${PREFIX}/bin/logrx rules list --format json
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"file\": \"${PREFIX}/share/logrx/rules/sglang/memory.json\"")
  message(FATAL_ERROR "installed logrx did not prefer its installed rules: ${code}\n${err}")
endif()
execute_process(COMMAND ${PREFIX}/bin/logrx rules test RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "installed rulebook examples fail:\n${out}")
endif()

# The Python package installed into the prefix's site-packages loads
# <prefix>/lib/liblogrx.so, which finds the rules installed next to it.
if(PYTHON AND PYTHON_DIR)
  set(script "import logrx, sys; r = logrx.scan(sys.argv[1]); print(logrx.__file__); print('source', logrx.builtin_rules_source()); print([f.rule for f in r.findings if f.severity == 'fatal'])")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LOGRX_BUILTIN_RULES --unset=LOGRX_RULES_PATH
                          --unset=LOGRX_LIBRARY --unset=LD_LIBRARY_PATH PYTHONPATH=${PREFIX}/${PYTHON_DIR}
                          ${PYTHON} -c "${script}" ${LOG}
                  WORKING_DIRECTORY ${PREFIX}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0 OR NOT out MATCHES "^${PREFIX}/${PYTHON_DIR}/logrx/__init__.py"
     OR NOT out MATCHES "source ${PREFIX}/share/logrx/rules\n"
     OR NOT out MATCHES "'sglang.memory.not-enough-memory'")
    message(FATAL_ERROR "installed Python package: exit ${code}\n${out}\n${err}")
  endif()
endif()
file(REMOVE_RECURSE ${PREFIX})
