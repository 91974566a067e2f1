# Runs a plan with the rackchaos binary, renders the stored run in FORMAT and checks the file with
# an external tool: JSON through python3's json module, JUnit against data/junit.xsd with xmllint.
# -DRC=<rackchaos> -DPLAN=<plan.yaml> -DFORMAT=<format> -DCHECKER=<python3|xmllint> -DXSD=<file>
# -DWORKDIR=<dir>
set(db "${WORKDIR}/cli_${FORMAT}.db")
set(out "${WORKDIR}/cli_${FORMAT}.out")
file(REMOVE "${db}" "${db}-wal" "${db}-shm" "${out}")
execute_process(COMMAND "${RC}" run "${PLAN}" --db "${db}" -q RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
  message(FATAL_ERROR "rackchaos run exited ${rc}")
endif()
execute_process(COMMAND "${RC}" report --db "${db}" --format "${FORMAT}" -o "${out}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 1)  # the run's verdict: the plan's gate fails on purpose
  message(FATAL_ERROR "rackchaos report --format ${FORMAT} exited ${rc}, expected 1: ${err}")
endif()
if(CHECKER MATCHES "python3")
  execute_process(COMMAND "${CHECKER}" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['faults'] and d['run']['id'] == 1, d" "${out}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
else()
  execute_process(COMMAND "${CHECKER}" --noout --schema "${XSD}" "${out}" RESULT_VARIABLE rc ERROR_VARIABLE err)
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CHECKER} rejected the ${FORMAT} report ${out}: ${err}")
endif()
message(STATUS "${FORMAT} report ${out} passed ${CHECKER}")
