# Runs CMD (a ;-list) and checks its exit code is CODE and its combined output matches REGEX.
# Usage: cmake -DCMD="a;b" -DCODE=2 -DREGEX="..." [-DWORKDIR=dir] [-DREMOVE=file] -P expect_exit.cmake
# REMOVE names a database to delete first, so each run starts from a fresh report.
# SPARSE (in WORKDIR) is created first as a sparse file of SPARSE_BYTES zero bytes, and deleted after.
# ABSENT names a file that must not exist afterwards (e.g. the database a dry run must not write).
# NOT_REGEX, when given, must not match the combined output.
if(REMOVE)
  file(REMOVE ${REMOVE} ${REMOVE}-wal ${REMOVE}-shm)
endif()
if(NOT WORKDIR)
  set(WORKDIR ".")
endif()
if(SPARSE)
  execute_process(COMMAND truncate -s ${SPARSE_BYTES} ${SPARSE} WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE made)
  if(NOT made EQUAL 0)
    message(FATAL_ERROR "cannot create ${SPARSE}")
  endif()
endif()
execute_process(COMMAND ${CMD} WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(SPARSE)
  file(REMOVE ${WORKDIR}/${SPARSE})
endif()
if(NOT rc STREQUAL CODE)
  message(FATAL_ERROR "exit code ${rc}, expected ${CODE}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(ABSENT AND EXISTS ${WORKDIR}/${ABSENT})
  message(FATAL_ERROR "${ABSENT} exists, but the command must not write it\nstdout:\n${out}")
endif()
if(REGEX AND NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT_REGEX AND "${out}${err}" MATCHES "${NOT_REGEX}")
  message(FATAL_ERROR "output matches '${NOT_REGEX}', which it must not\nstdout:\n${out}\nstderr:\n${err}")
endif()
