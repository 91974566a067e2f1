#!/usr/bin/env python3
"""serve's pages in headless Chromium (label `browser`).

Starts `rackchaos serve` on loopback over three databases: a fleet of runs on one rack, the same with
hostile text in every field a page shows (tests/serve/serve_fixture.h), and one a paced `rackchaos run` is
writing. Then:
  - every link reachable from / answers 200 (a crawler, same server only);
  - in Chromium, no page of the hostile database runs a script it stored (the script would mark <html>
    with data-pwned), the hostile text is shown as text, and no page has a <script> but serve's own;
  - the rack page's chart has one point per scored run;
  - the running run's page shows new events without a reload (rows live.js appended, class "new").
Usage: browser_test.py RACKCHAOS FLEET_DB_TOOL CHROMIUM SOURCE_DIR WORKDIR
"""
import html.parser
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

RC, FLEET, CHROMIUM, SRC, WORK = sys.argv[1:6]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--user-data-dir=" + os.path.join(WORK, "chromium-profile")]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.hrefs.append(value)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def crawl(base, limit=400):
    """Every same-server link reachable from /, each fetched once; returns {path: status}."""
    seen, todo = {}, ["/"]
    while todo and len(seen) < limit:
        path = todo.pop()
        if path in seen:
            continue
        status, body = get(base + path)
        seen[path] = status
        if "html" not in body[:200].lower():
            continue
        parser = Links()
        parser.feed(body)
        for href in parser.hrefs:
            url = urllib.parse.urlsplit(urllib.parse.urljoin(base + path, href))
            if url.netloc and url.netloc != urllib.parse.urlsplit(base).netloc:
                fail(path + " links outside the server: " + href)
            target = url.path + ("?" + url.query if url.query else "")
            # Paging and filter links multiply; one of each kind is enough.
            if target not in seen and not re.search(r"before=\d+", target):
                todo.append(target)
    return seen


def dom(url, budget_ms=0):
    extra = ["--virtual-time-budget=%d" % budget_ms] if budget_ms else []
    r = subprocess.run([CHROMIUM] + FLAGS + extra + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("chromium --dump-dom %s exited %d" % (url, r.returncode))
    return r.stdout


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    good, hostile, live = (os.path.join(WORK, n) for n in ("fleet.db", "hostile.db", "live.db"))
    subprocess.run([FLEET, good, "6"], check=True)
    subprocess.run([FLEET, hostile, "4", "hostile"], check=True)
    procs = []
    try:
        # A 6 h plan at 600 simulated seconds per wall second: about 36 s of events arriving.
        run = subprocess.Popen([RC, "run", os.path.join(SRC, "scenarios/quickstart.yaml"), "--db", live, "-q",
                                "--pace", "600"], stdout=subprocess.DEVNULL)
        procs.append(run)
        for _ in range(100):
            if os.path.exists(live):
                break
            time.sleep(0.1)
        serve = subprocess.Popen([RC, "serve", "--db", good, "--db", hostile, "--db", live, "--listen", "127.0.0.1:0"],
                                 stdout=subprocess.PIPE, text=True)
        procs.append(serve)
        line = serve.stdout.readline()
        m = re.match(r"rackchaos serve: (http://[^/ ]+)/ ", line)
        if not m:
            fail("serve printed no URL: " + line)
        base = m.group(1)

        # The live page first, while the run is young: rows appended by live.js without a reload.
        live_dom = dom(base + "/db/2/runs/1", budget_ms=20000)
        appended = len(re.findall(r'<tr class="new">', live_dom))
        if appended < 1:
            fail("the running run's page got no new event rows without a reload")
        print("live page: %d event rows appended by live.js" % appended)

        statuses = crawl(base)
        bad = {p: s for p, s in statuses.items() if s != 200}
        if bad:
            fail("links that do not answer 200: %s" % bad)
        print("crawled %d pages, all 200" % len(statuses))

        serial = urllib.parse.quote(
            "<script>document.documentElement.setAttribute('data-pwned','serial')</script>\"'\x01\x1b[31m"
            "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','serial-img')\">", safe="")
        pages = ["/", "/db/1/runs", "/db/1/runs/1", "/db/1/runs/4", "/db/1/runs/1/live", "/db/1/racks",
                 "/db/1/racks?serial=" + serial, "/db/1/sweeps", "/db/1/sweeps/abc123", "/db/1/qualifications",
                 "/db/1/compare?a=1&b=2"]
        for page in pages:
            text = dom(base + page, budget_ms=2000)
            if "data-pwned=" in text:
                fail(page + ": a stored script ran: " + re.search(r"<html[^>]*>", text).group(0))
            scripts = re.findall(r"<script\b[^>]*>", text)
            if any('src="/static/live.js"' not in s for s in scripts):
                fail(page + ": a <script> element that is not serve's: %s" % scripts)
            if "&lt;script&gt;document.documentElement" not in text and page not in ("/", "/db/1/racks"):
                fail(page + ": the stored text is not shown (escaped) on the page")
            if "<img src=" in text:
                fail(page + ": a stored <img> became an element")
        print("%d pages of the hostile database: no stored script ran" % len(pages))

        rack = dom(base + "/db/0/racks?serial=RK-001")
        points = len(re.findall(r'<circle class="pt ttr"', rack))
        if points != 5:  # six runs, the newest still running (not scored)
            fail("the rack chart has %d TTR points, expected 5 (one per scored run)" % points)
        print("rack chart: one TTR point per scored run (%d)" % points)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
