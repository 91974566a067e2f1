# The sweep's HTML page in headless Chromium (label `browser`): a sweep over checkpoint intervals given
# out of order, two metrics asked with --metrics. The rendered DOM has one plot per metric, the grid
# values on the x axis in the order of their values (2m, 5m, 10m), a mean with its 95% CI bar per point,
# the stats table with sd, min and max, and no script; the page renders (a non-blank screenshot). The CSV
# written beside it has a header and one row per point and metric, by value too.
# -DRC -DPLAN -DCHROMIUM -DWORKDIR
set(work "${WORKDIR}/sweep-html")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
execute_process(COMMAND "${RC}" sweep "${PLAN}" --seeds 4 --grid checkpoint.interval=10m,2m,5m
                        --metrics gpu_hours_lost.total,ettr.min --db "${work}/s.db" --html "${work}/s.html"
                        --csv "${work}/s.csv" -q
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
  message(FATAL_ERROR "sweep failed (${rc}): ${err}")
endif()
file(READ "${work}/s.html" html)
if(html MATCHES "<script" OR html MATCHES "src=\"http" OR html MATCHES "href=\"http")
  message(FATAL_ERROR "the sweep page loads a script or an external resource")
endif()
set(flags --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
          --disable-sync --no-first-run --user-data-dir=${work}/chromium-profile)
execute_process(COMMAND "${CHROMIUM}" ${flags} --dump-dom "file://${work}/s.html" OUTPUT_VARIABLE dom
                ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chromium --dump-dom failed (${rc})")
endif()
function(expect_count regex n what)
  string(REGEX MATCHALL "${regex}" found "${dom}")
  list(LENGTH found got)
  if(NOT got EQUAL n)
    message(FATAL_ERROR "expected ${n} ${what} in the rendered DOM, found ${got}")
  endif()
endfunction()
expect_count("<svg class=\"sweep-plot\"" 2 "plots")
expect_count("<circle class=\"mean( best)?\"" 6 "means (3 points x 2 metrics)")
# Each metric's optimum (issue 22): one point per plot drawn as the best, its row marked, a line naming it.
expect_count("<circle class=\"mean best\"" 2 "best points (one per metric)")
expect_count("<tr class=\"best\">" 2 "best rows")
expect_count("<p class=\"best\">Best: (lowest|highest) mean [-0-9.e+]+ at checkpoint.interval=[0-9]+m</p>" 2 "best lines")
expect_count("<line class=\"ci\"" 18 "CI bar lines (3 per mean)")
string(REGEX MATCHALL "text-anchor=\"middle\">[0-9]+m</text>" ticks "${dom}")
string(REGEX REPLACE "text-anchor=\"middle\">([0-9]+m)</text>" "\\1" ticks "${ticks}")
if(NOT ticks STREQUAL "2m;5m;10m;2m;5m;10m")
  message(FATAL_ERROR "x axis labels are not the grid values in value order: ${ticks}")
endif()
expect_count("<title>checkpoint.interval=[0-9]+m: mean [-0-9.e+]+, 95% CI .[-0-9.e+]+, [-0-9.e+]+., n 4( \\(best: (lowest|highest) mean\\))?</title>" 6 "hover titles with the CI")
expect_count("<th>sd</th><th>min</th><th>max</th><th>p50</th><th>p95</th><th>95% CI of mean</th>" 2 "stats tables")
if(dom MATCHES "<script")
  message(FATAL_ERROR "the rendered page has a script")
endif()
execute_process(COMMAND "${CHROMIUM}" ${flags} --screenshot=${work}/s.png --window-size=1000,1400
                "file://${work}/s.html" ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 120)
file(READ "${work}/s.png" header LIMIT 24 HEX)
if(NOT header MATCHES "^89504e470d0a1a0a0000000d49484452000003e800000578$")
  message(FATAL_ERROR "screenshot is not a 1000x1400 PNG: ${header}")
endif()
file(SIZE "${work}/s.png" size)
if(size LESS 15000)
  message(FATAL_ERROR "screenshot is only ${size} bytes: the page rendered (nearly) blank")
endif()
file(STRINGS "${work}/s.csv" csv)
list(LENGTH csv lines)
list(GET csv 0 head)
list(GET csv 1 first)
if(NOT lines EQUAL 7 OR NOT head STREQUAL "point,checkpoint.interval,metric,runs,n,mean,sd,min,max,p50,p95,ci_low,ci_high"
   OR NOT first MATCHES "^checkpoint.interval=2m,2m,gpu_hours_lost.total,4,4,")
  message(FATAL_ERROR "unexpected CSV:\n${csv}")
endif()
message(STATUS "sweep page: screenshot ${size} bytes")
