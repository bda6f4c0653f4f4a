# Writes a shell completion script: EXE completion SHELL > OUT (run at build time by the
# lancever_completion target; installed by cmake --install).
execute_process(COMMAND ${EXE} completion ${SHELL} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "lancever completion ${SHELL} failed (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
