# Writes the man page: EXE help --man > OUT (run at build time by the lancever_man target).
execute_process(COMMAND ${EXE} help --man OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "lancever help --man failed (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
