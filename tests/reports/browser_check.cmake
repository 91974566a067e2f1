# Loads a rendered HTML report in headless Chromium and asserts on what it rendered: the DOM after
# parsing has one timeline bar per fault, isolation and recovery of the run, and the screenshot is a
# PNG of the requested size. -DRC -DPLAN -DCHROMIUM -DWORKDIR -DFAULTS=<expected fault bars>
set(db "${WORKDIR}/browser.db")
set(html "${WORKDIR}/browser.html")
file(REMOVE "${db}" "${db}-wal" "${db}-shm" "${html}" "${WORKDIR}/browser.png")
execute_process(COMMAND "${RC}" run "${PLAN}" --db "${db}" -q)
execute_process(COMMAND "${RC}" report --db "${db}" --format html -o "${html}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rendering html failed (${rc})")
endif()
set(flags --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
          --disable-sync --no-first-run --user-data-dir=${WORKDIR}/chromium-profile)
execute_process(COMMAND "${CHROMIUM}" ${flags} --dump-dom "file://${html}" OUTPUT_VARIABLE dom
                ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chromium --dump-dom failed (${rc})")
endif()
foreach(kind tl-fault tl-isolated tl-recovered)
  string(REGEX MATCHALL "class=\"tl-bar ${kind}\"" bars "${dom}")
  list(LENGTH bars n)
  if(NOT n EQUAL FAULTS)
    message(FATAL_ERROR "expected ${FAULTS} ${kind} bars in the rendered DOM, found ${n}")
  endif()
endforeach()
execute_process(COMMAND "${CHROMIUM}" ${flags} --screenshot=${WORKDIR}/browser.png --window-size=1400,2000
                "file://${html}" ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 60)
file(READ "${WORKDIR}/browser.png" header LIMIT 24 HEX)
# PNG signature, then the IHDR width and height (big-endian): 1400 = 0x578, 2000 = 0x7d0.
if(NOT header MATCHES "^89504e470d0a1a0a0000000d4948445200000578000007d0$")
  message(FATAL_ERROR "screenshot is not a 1400x2000 PNG: ${header}")
endif()
file(SIZE "${WORKDIR}/browser.png" size)
if(size LESS 20000)
  message(FATAL_ERROR "screenshot is only ${size} bytes: the page rendered (nearly) blank")
endif()
message(STATUS "rendered ${FAULTS} faults; screenshot ${size} bytes")
