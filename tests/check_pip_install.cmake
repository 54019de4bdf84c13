# pip installs the built package (python/pyproject.toml, setuptools backend)
# with its library; the installed copy scans a log with nothing else around.
file(REMOVE_RECURSE ${WORK})
file(COPY ${PACKAGE}/ DESTINATION ${WORK}/source)
execute_process(COMMAND ${PYTHON} -m pip install --no-build-isolation --no-deps --no-index
                        --disable-pip-version-check --target ${WORK}/site ${WORK}/source
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "pip install failed: ${code}\n${out}\n${err}")
endif()
if(NOT EXISTS ${WORK}/site/logrx/py.typed OR NOT EXISTS ${WORK}/site/logrx/liblogrx.so)
  message(FATAL_ERROR "the installed package lacks py.typed or liblogrx.so")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LOGRX_LIBRARY --unset=LOGRX_BUILTIN_RULES
                        PYTHONPATH=${WORK}/site
                        ${PYTHON} -c "import logrx, sys; print(logrx.__file__); print([f.rule for f in logrx.scan(sys.argv[1]).findings if f.severity == 'fatal'])" ${LOG}
                WORKING_DIRECTORY ${WORK}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "^${WORK}/site/logrx/__init__.py" OR NOT out MATCHES "sglang.memory.not-enough-memory")
  message(FATAL_ERROR "pip-installed package: ${code}\n${out}\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
