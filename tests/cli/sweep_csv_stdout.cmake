# `--csv -` and `--html -`: stdout is the CSV (or the page) alone, for `sweep` and `report sweep`; the
# table is not printed and the lines that say what was stored go to stderr.
# -DRC -DPLAN -DWORKDIR
set(work "${WORKDIR}/sweep-csv-stdout")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
set(header "point,checkpoint.interval,metric,runs,n,mean,sd,min,max,p50,p95,ci_low,ci_high")
# Every line of `csv` has the header's 13 columns (no cell here is quoted); `n` lines in all.
function(expect_csv csv n what)
  string(REGEX REPLACE "\n$" "" trimmed "${csv}")
  string(REPLACE "\n" ";" lines "${trimmed}")
  list(LENGTH lines got)
  list(GET lines 0 first)
  if(NOT got EQUAL n OR NOT first STREQUAL header)
    message(FATAL_ERROR "${what}: expected ${n} CSV lines starting with the header, got ${got}:\n${csv}")
  endif()
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "," commas "${line}")
    list(LENGTH commas c)
    if(NOT c EQUAL 12)
      message(FATAL_ERROR "${what}: not a 13-column CSV line: '${line}'")
    endif()
  endforeach()
endfunction()

execute_process(COMMAND "${RC}" sweep "${PLAN}" --seeds 2 --grid checkpoint.interval=10m,2m --metrics ettr.min,ttr.p95
                        --db "${work}/s.db" --csv -
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
  message(FATAL_ERROR "sweep failed (${rc}): ${err}")
endif()
expect_csv("${out}" 5 "sweep --csv -")
if(NOT out MATCHES "\ncheckpoint.interval=2m,2m,ettr.min,2,2,")
  message(FATAL_ERROR "sweep --csv -: the 2m point is not first:\n${out}")
endif()
if(NOT err MATCHES "Sweep [0-9a-f]+ \\(shard 1/1\\): 4 run\\(s\\) stored in ")
  message(FATAL_ERROR "sweep --csv -: stderr does not say what was stored: ${err}")
endif()

execute_process(COMMAND "${RC}" report sweep --db "${work}/s.db" --metrics ettr.min,ttr.p95 --csv - --timing
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "report sweep failed (${rc}): ${err}")
endif()
expect_csv("${out}" 9 "report sweep --csv - --timing")  # 2 points x 2 metrics + 2 points x wall, cpu

execute_process(COMMAND "${RC}" report sweep --db "${work}/s.db" --html -
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^<!DOCTYPE html>\n" OR NOT out MATCHES "</html>\n$")
  message(FATAL_ERROR "report sweep --html -: stdout is not the page alone (${rc}): ${err}")
endif()
message(STATUS "sweep --csv -: stdout holds the CSV alone")
