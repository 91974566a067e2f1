#!/usr/bin/env python3
"""rackchaos serve over a large report database (issue 24's numbers; not a test).

  1. latency: the runs page and a rack's page (and their JSON), REQUESTS sequential requests each on one
     keep-alive connection after a warm-up: p50, p95, p99, max (target: p99 < 200 ms);
  2. load: CLIENTS concurrent keep-alive clients for SECONDS, each looping over a mix of pages (runs,
     filtered runs, the rack page, run reports, events, JSON, /metrics): requests, errors (anything but
     200, any socket error, a 30 s timeout), serve's RSS sampled every second (target: no error, flat
     memory), serve's CPU. Two load generators, one after the other on the same serve (--client):
       wrk     Debian's wrk (C, epoll; bench/serve/mix.lua gives the same mix): the figures of record. Its
               connections cannot be starved by the client itself, so its latency is serve's (and the
               kernel's scheduling of serve);
       python  50 threads of http.client in this process: kept to compare with. Under one GIL on a loaded
               machine its threads wait for the interpreter as well as for serve, and it counts that wait.

The database is made first when absent: `rackchaos sweep scenarios/quickstart.yaml --seeds RUNS` (one
GB200 NVL72 rack, so every run touches the rack page's serial).

Usage: serve_bench.py RACKCHAOS [--db PATH] [--runs 10000] [--requests 100] [--clients 50] [--seconds 60]
                         [--threads 4] [--client wrk,python]
"""
import argparse
import http.client
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RACK = "SIM-gb200-nvl72-r01"


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_get(conn, path):
    start = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    return r.status, time.perf_counter() - start, len(body)


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100.0 * len(s) + 0.5)) - 1))]


def latency(host, port, path, n):
    conn = http.client.HTTPConnection(host, port, timeout=30)
    for _ in range(3):  # warm-up: the pooled connection, SQLite's page cache
        timed_get(conn, path)
    times, size = [], 0
    for _ in range(n):
        status, t, size = timed_get(conn, path)
        if status != 200:
            sys.exit("%s answered %d" % (path, status))
        times.append(t * 1000)
    conn.close()
    return {"p50": statistics.median(times), "p95": percentile(times, 95), "p99": percentile(times, 99),
            "max": max(times), "bytes": size}


def load(host, port, clients, seconds, runs):
    paths = ["/db/0/runs", "/db/0/runs?status=passed", "/db/0/runs?before=%d" % (runs // 2),
             "/db/0/racks?serial=" + RACK, "/api/db/0/runs", "/api/db/0/racks?serial=" + RACK, "/metrics"]
    stop = time.monotonic() + seconds
    counts, errors, lock = [0], [], threading.Lock()
    latencies, first = [], []  # first: each connection's first request (waits for the connection's accept)

    def client(seed):
        rng = random.Random(seed)
        conn = http.client.HTTPConnection(host, port, timeout=30)
        n = 0
        while time.monotonic() < stop:
            run = rng.randint(1, runs)
            path = rng.choice(paths + ["/db/0/runs/%d" % run, "/api/db/0/runs/%d/events?limit=200" % run])
            try:
                status, took, _ = timed_get(conn, path)
                with lock:
                    latencies.append(took * 1000)
                    if n == 0:
                        first.append(took * 1000)
                if status != 200:
                    with lock:
                        errors.append("%s: HTTP %d" % (path, status))
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    errors.append("%s: %s" % (path, e))
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=30)
            n += 1
        with lock:
            counts[0] += n

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    return threads, counts, errors, latencies, first


def sample(pid, alive):
    """serve's RSS (KiB) every second while alive() is true."""
    samples = []
    while alive():
        samples.append(rss_kib(pid))
        time.sleep(1)
    return samples


def wrk_load(host, port, clients, seconds, runs):
    """Runs wrk with mix.lua; returns its summary line's fields and its --latency table."""
    cmd = ["wrk", "-t2", "-c%d" % clients, "-d%ds" % seconds, "--timeout", "30s", "--latency",
           "-s", os.path.join(SRC, "bench/serve/mix.lua"), "http://%s:%d" % (host, port), "--", str(runs)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    return proc, cmd


def parse_wrk(text):
    m = re.search(r"^WRK (.*)$", text, re.M)
    if not m:
        sys.exit("wrk printed no summary:\n" + text)
    fields = dict(kv.split("=") for kv in m.group(1).split())
    dist = re.search(r"Latency Distribution\n((?:\s+\d+%.*\n)+)", text)
    return {k: float(v) for k, v in fields.items()}, (dist.group(1).rstrip() if dist else "")


def report_load(samples, cpu, wall):
    third = max(1, len(samples) // 3)
    print("  serve RSS (MiB): start %.1f, mean of the first third %.1f, of the last third %.1f, max %.1f" %
          (samples[0] / 1024, statistics.mean(samples[:third]) / 1024, statistics.mean(samples[-third:]) / 1024,
           max(samples) / 1024))
    print("  serve CPU %.1f s over %.1f s wall (%.0f%% of one core); load average %s" %
          (cpu, wall, 100 * cpu / wall, open("/proc/loadavg").read().split(" ", 3)[:3]))


def handler_times(host, port, before):
    after = server_times(host, port)
    total = after["+Inf"] - before.get("+Inf", 0)
    within = {le: after[le] - before.get(le, 0) for le in ("0.2", "1", "5")}
    print("  serve's handler time: %d requests, %d within 200 ms, %d within 1 s, %d within 5 s" %
          (total, within["0.2"], within["1"], within["5"]))


def server_times(host, port):
    """serve's own view: its request duration histogram (handler time, no queueing) from /metrics."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    buckets = {}
    for m in re.finditer(r'rackchaos_serve_request_duration_seconds_bucket\{route="[^"]*",le="([^"]+)"\} (\d+)', text):
        buckets[m.group(1)] = buckets.get(m.group(1), 0) + int(m.group(2))
    return buckets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rackchaos")
    ap.add_argument("--db", default="serve_bench.db")
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--threads", type=int, default=4, help="serve --threads")
    ap.add_argument("--client", default="wrk,python", help="load generators, in order: wrk, python or both")
    a = ap.parse_args()
    if "wrk" in a.client and not shutil.which("wrk"):
        sys.exit("wrk not found: apt-get install wrk (scripts/install-deps --bench), or --client python")
    if not os.path.exists(a.db):
        print("making %s: a sweep of %d runs" % (a.db, a.runs), flush=True)
        start = time.time()
        subprocess.run([a.rackchaos, "sweep", os.path.join(SRC, "scenarios/quickstart.yaml"), "--seeds", str(a.runs),
                        "--threads", "2", "--db", a.db, "-q"], check=False)
        print("  %.0f s" % (time.time() - start))
    serve = subprocess.Popen([a.rackchaos, "serve", "--db", a.db, "--listen", "127.0.0.1:0", "--threads",
                              str(a.threads)], stdout=subprocess.PIPE, text=True)
    try:
        m = re.match(r"rackchaos serve: http://([0-9.]+):(\d+)/", serve.stdout.readline())
        host, port = m.group(1), int(m.group(2))
        conn = http.client.HTTPConnection(host, port)
        conn.request("GET", "/api/dbs")
        runs = int(re.search(r'"runs": (\d+)', conn.getresponse().read().decode()).group(1))
        conn.close()
        print("database %s: %d runs (%.0f MiB)" % (a.db, runs, os.path.getsize(a.db) / 2**20))
        print("\n1. latency, %d sequential requests each (ms)" % a.requests)
        print("  %-44s %8s %8s %8s %8s %9s" % ("page", "p50", "p95", "p99", "max", "bytes"))
        cpu0 = cpu_s(serve.pid)
        for path in ["/db/0/runs", "/db/0/racks?serial=" + RACK, "/api/db/0/runs", "/api/db/0/racks?serial=" + RACK,
                     "/db/0/runs?status=passed&plan=quickstart"]:
            r = latency(host, port, path, a.requests)
            print("  %-44s %8.1f %8.1f %8.1f %8.1f %9d" % (path, r["p50"], r["p95"], r["p99"], r["max"], r["bytes"]))
        print("  serve CPU for these: %.2f s" % (cpu_s(serve.pid) - cpu0))

        for client in a.client.split(","):
            print("\n2. load (%s): %d clients for %d s" % (client, a.clients, a.seconds))
            cpu0, wall0 = cpu_s(serve.pid), time.time()
            before = server_times(host, port)
            if client == "wrk":
                proc, cmd = wrk_load(host, port, a.clients, a.seconds, runs)
                samples = sample(serve.pid, lambda: proc.poll() is None)
                out = proc.communicate()[0]
                wall, cpu = time.time() - wall0, cpu_s(serve.pid) - cpu0
                print("  " + " ".join(cmd))
                w, dist = parse_wrk(out)
                errors = w["connect"] + w["read"] + w["write"] + w["timeout"] + w["status"]
                print("  requests %d (%.0f/s), errors %d (connect %d, read %d, write %d, timeout %d, non-2xx %d)" %
                      (w["requests"], w["requests"] / w["seconds"], errors, w["connect"], w["read"], w["write"],
                       w["timeout"], w["status"]))
                print("  client latency (ms, queueing included): p50 %.0f, p90 %.0f, p99 %.0f, max %.0f" %
                      (w["p50"], w["p90"], w["p99"], w["max"]))
                print("  wrk --latency:\n" + dist)
            elif client == "python":
                threads, counts, errors, latencies, first = load(host, port, a.clients, a.seconds, runs)
                samples = sample(serve.pid, lambda: any(t.is_alive() for t in threads))
                for t in threads:
                    t.join()
                wall, cpu = time.time() - wall0, cpu_s(serve.pid) - cpu0
                print("  requests %d (%.0f/s), errors %d" % (counts[0], counts[0] / wall, len(errors)))
                print("  client latency (ms, queueing included): p50 %.0f, p99 %.0f, max %.0f" %
                      (statistics.median(latencies), percentile(latencies, 99), max(latencies)))
                print("  each connection's first request (ms): p50 %.0f, max %.0f" %
                      (statistics.median(first), max(first)))
                for e in errors[:10]:
                    print("    " + e)
            else:
                sys.exit("--client: 'wrk' or 'python', not %r" % client)
            handler_times(host, port, before)
            report_load(samples, cpu, wall)
    finally:
        serve.terminate()
        serve.wait(timeout=20)


if __name__ == "__main__":
    main()
