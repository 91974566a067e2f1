# Runs CMD (a ;-list) and checks its exit code is CODE and its combined output matches REGEX.
# Usage: cmake -DCMD="a;b" -DCODE=2 -DREGEX="..." [-DWORKDIR=dir] [-DREMOVE=file] -P expect_exit.cmake
# REMOVE names a database to delete first, so each run starts from a fresh report.
# ABSENT names a file that must not exist afterwards (e.g. the database a dry run must not write).
if(REMOVE)
  file(REMOVE ${REMOVE} ${REMOVE}-wal ${REMOVE}-shm)
endif()
if(NOT WORKDIR)
  set(WORKDIR ".")
endif()
execute_process(COMMAND ${CMD} WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL CODE)
  message(FATAL_ERROR "exit code ${rc}, expected ${CODE}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(ABSENT AND EXISTS ${WORKDIR}/${ABSENT})
  message(FATAL_ERROR "${ABSENT} exists, but the command must not write it\nstdout:\n${out}")
endif()
if(REGEX AND NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
