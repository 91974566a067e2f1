#!/usr/bin/env python3
"""rackchaos serve over a large report database (issue 24's numbers; not a test).

  1. latency: the runs page and a rack's page (and their JSON), REQUESTS sequential requests each on one
     keep-alive connection after a warm-up: p50, p95, p99, max (target: p99 < 200 ms);
  2. load: CLIENTS concurrent keep-alive clients for SECONDS, each looping over a mix of pages (runs,
     filtered runs, the rack page, run reports, events, JSON, /metrics): requests, errors (anything but
     200, any socket error), serve's RSS sampled every second (target: no error, flat memory), serve's CPU.

The database is made first when absent: `rackchaos sweep scenarios/quickstart.yaml --seeds RUNS` (one
GB200 NVL72 rack, so every run touches the rack page's serial).

Usage: serve_bench.py RACKCHAOS [--db PATH] [--runs 10000] [--requests 100] [--clients 50] [--seconds 60]
"""
import argparse
import http.client
import os
import random
import re
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
    latencies = []

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
    return threads, counts, errors, latencies


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
    a = ap.parse_args()
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

        print("\n2. load: %d clients for %d s" % (a.clients, a.seconds))
        cpu0, wall0 = cpu_s(serve.pid), time.time()
        before = server_times(host, port)
        threads, counts, errors, latencies = load(host, port, a.clients, a.seconds, runs)
        samples = []
        while any(t.is_alive() for t in threads):
            samples.append(rss_kib(serve.pid))
            time.sleep(1)
        for t in threads:
            t.join()
        wall, cpu = time.time() - wall0, cpu_s(serve.pid) - cpu0
        third = max(1, len(samples) // 3)
        print("  requests %d (%.0f/s), errors %d" % (counts[0], counts[0] / wall, len(errors)))
        print("  client latency (ms, queueing included): p50 %.0f, p99 %.0f, max %.0f" %
              (statistics.median(latencies), percentile(latencies, 99), max(latencies)))
        after = server_times(host, port)
        total = after["+Inf"] - before.get("+Inf", 0)
        within = {le: after[le] - before.get(le, 0) for le in ("0.2", "1", "5")}
        print("  serve's handler time: %d requests, %d within 200 ms, %d within 1 s, %d within 5 s" %
              (total, within["0.2"], within["1"], within["5"]))
        for e in errors[:10]:
            print("    " + e)
        print("  serve RSS (MiB): start %.1f, mean of the first third %.1f, of the last third %.1f, max %.1f" %
              (samples[0] / 1024, statistics.mean(samples[:third]) / 1024, statistics.mean(samples[-third:]) / 1024,
               max(samples) / 1024))
        print("  serve CPU %.1f s over %.1f s wall (%.0f%% of one core)" % (cpu, wall, 100 * cpu / wall))
    finally:
        serve.terminate()
        serve.wait(timeout=20)


if __name__ == "__main__":
    main()
