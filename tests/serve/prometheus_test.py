#!/usr/bin/env python3
"""Debian's prometheus scrapes a running `rackchaos run --metrics-listen` (label `prometheus`).

A simulated plan slowed to wall clock (--pace) runs with its /metrics on loopback; a real Prometheus
server the test starts on loopback scrapes it every second; the series are read back through
Prometheus' HTTP API and checked against what the run stored. Then the same plan and seed run unpaced:
pacing must not change a single stored event or metric.
Usage: prometheus_test.py RACKCHAOS PROMETHEUS SOURCE_DIR WORKDIR
"""
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request

RC, PROMETHEUS, SRC, WORK = sys.argv[1:5]
PLAN = os.path.join(SRC, "scenarios/quickstart.yaml")  # 6 h simulated; faults at 20m, 80m, 160m, 240m
PACE = "900"  # 6 h in 24 s of wall time: about 20 scrapes at 1 s


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(base, promql):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        fail("query %s: %s" % (promql, doc))
    return doc["data"]["result"]


def scalar(base, promql):
    result = query(base, promql)
    if not result:
        fail("no series for " + promql)
    return float(result[0]["value"][1])


def rows(db, sql):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    paced_db, plain_db = os.path.join(WORK, "paced.db"), os.path.join(WORK, "plain.db")
    procs = []
    try:
        run = subprocess.Popen([RC, "run", PLAN, "--db", paced_db, "-q", "--seed", "7", "--pace", PACE,
                                "--metrics-listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
        procs.append(run)
        line = run.stderr.readline()
        m = re.match(r"rackchaos: metrics at http://(127\.0\.0\.1:\d+)/metrics", line)
        if not m:
            fail("run printed no metrics address: " + line)
        target = m.group(1)
        port = free_port()
        config = os.path.join(WORK, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: rackchaos\n    static_configs:\n"
                    "      - targets: ['%s']\n" % target)
        prom = subprocess.Popen([PROMETHEUS, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(WORK, "data"),
                                 "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "prometheus.log"), "w"))
        procs.append(prom)
        base = "http://127.0.0.1:%d" % port
        for _ in range(300):
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            fail("prometheus did not become ready (see %s/prometheus.log)" % WORK)
        if run.wait(timeout=120) != 0:
            fail("the paced run exited %d" % run.returncode)
        time.sleep(2)  # the last scrape's samples are committed to the head block

        # What Prometheus scraped, read back through its HTTP API, against what the run stored.
        scrapes = scalar(base, 'count_over_time(up{job="rackchaos"}[10m])')
        up = scalar(base, 'max_over_time(up{job="rackchaos"}[10m])')
        if up != 1 or scrapes < 10:
            fail("expected at least 10 successful scrapes of the paced run, got %d (up max %g)" % (scrapes, up))
        stored_faults = rows(paced_db, "SELECT count(*) FROM faults")[0][0]
        injected = scalar(base, "sum(max_over_time(rackchaos_faults_injected_total[10m]))")
        if injected != stored_faults:
            fail("Prometheus saw %g faults injected, the run stored %d" % (injected, stored_faults))
        kinds = {r["metric"]["kind"] for r in query(base, "max_over_time(rackchaos_faults_injected_total[10m])")}
        stored_kinds = {k for (k,) in rows(paced_db, "SELECT DISTINCT kind FROM faults")}
        if kinds != stored_kinds:
            fail("fault kinds %s in Prometheus, %s stored" % (kinds, stored_kinds))
        detections = scalar(base, "sum(max_over_time(rackchaos_detections_total[10m]))")
        if detections < 1:
            fail("no detection reached Prometheus")
        detected = scalar(base, "sum(max_over_time(rackchaos_time_to_detect_seconds_count[10m]))")
        stored_detected = rows(paced_db, "SELECT count(*) FROM fault_metrics WHERE ttd_us IS NOT NULL")[0][0]
        if not 1 <= detected <= stored_detected:
            fail("%g TTD observations in Prometheus, %d faults were detected" % (detected, stored_detected))
        active = scalar(base, "max_over_time(rackchaos_runs_active[10m])")
        if active != 1:
            fail("rackchaos_runs_active never read 1 (max %g)" % active)
        print("prometheus: %d scrapes; %d faults injected, %g detections, %g TTD observations" %
              (scrapes, injected, detections, detected))

        # Pacing changes when things happen in wall time, never what the run computes.
        subprocess.run([RC, "run", PLAN, "--db", plain_db, "-q", "--seed", "7"], check=True)
        for sql in ("SELECT seq, t_us, type, component, job, fault_id, detail FROM event_log ORDER BY seq",
                    "SELECT * FROM fault_metrics ORDER BY ord", "SELECT * FROM job_metrics ORDER BY ord",
                    "SELECT status, exit_code, failed_reason FROM runs"):
            if rows(paced_db, sql) != rows(plain_db, sql):
                fail("the paced run differs from the unpaced one in: " + sql)
        print("paced and unpaced runs stored the same %d events" % rows(paced_db, "SELECT count(*) FROM events")[0][0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
