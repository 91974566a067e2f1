-- wrk script for bench/serve/serve_bench.py: the same page mix as its Python clients (each request picks
-- one of nine kinds with equal chance: the runs page, filtered and older runs, the rack page and its JSON,
-- the runs JSON, /metrics, a random run's report, a random run's events).
--   wrk -t2 -c50 -d60s --timeout 30s --latency -s bench/serve/mix.lua http://127.0.0.1:PORT -- RUNS
-- wrk is C on epoll: one thread drives many connections, so a client cannot be starved by its own
-- interpreter (Python's 50 threads share one GIL) and its latency is the server's plus the kernel's.
local rack = "SIM-gb200-nvl72-r01"
local runs = 10000
local fixed = {}

function init(args)
  if args[1] then runs = tonumber(args[1]) end
  fixed = {"/db/0/runs", "/db/0/runs?status=passed", "/db/0/runs?before=" .. math.floor(runs / 2),
           "/db/0/racks?serial=" .. rack, "/api/db/0/runs", "/api/db/0/racks?serial=" .. rack, "/metrics"}
  -- Each wrk thread has its own Lua state: seed each differently so they do not ask the same sequence.
  math.randomseed(os.time() + tonumber(tostring(fixed):match("0x(%x+)") or "0", 16) % 1000003)
end

function request()
  local k = math.random(1, 9)
  local path
  if k <= 7 then
    path = fixed[k]
  elseif k == 8 then
    path = "/db/0/runs/" .. math.random(1, runs)
  else
    path = "/api/db/0/runs/" .. math.random(1, runs) .. "/events?limit=200"
  end
  return wrk.format("GET", path)
end

-- One line the bench parses: requests, errors by kind, and the latency distribution in ms.
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
      "WRK requests=%d seconds=%.1f connect=%d read=%d write=%d timeout=%d status=%d " ..
      "p50=%.1f p90=%.1f p99=%.1f max=%.1f\n",
      summary.requests, summary.duration / 1e6, e.connect, e.read, e.write, e.timeout, e.status,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000))
end
