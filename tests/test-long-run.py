#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run of many direct steps through `sightline run` (issue #13, bounds).

A page on loopback with a text field, a button and a line the button
rewrites; a test file of N steps (type, click, two text checks, over and
over); `sightline run` with the HTML, JUnit and JSON reports. Checks the run
passes with every step, the outputs stay bounded (the HTML report embeds the
screenshots of at most 50 steps and says so), and prints the figures: time,
peak resident memory of the command, sizes of the reports and the database.

Usage: test-long-run.py SIGHTLINE [N]  (TAP output; N defaults to 1000)
"""

import http.server
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SIGHTLINE = os.path.abspath(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
PAGE = b"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Notes</title></head>
<body><h1>Notes</h1><label>Note <input id="n"></label>
<button onclick="document.getElementById('out').textContent = 'Added ' + document.getElementById('n').value">Add</button>
<p id="out"></p></body></html>
"""

checks = []


def check(name, ok, detail=""):
    checks.append(ok)
    print(("ok" if ok else "not ok") + f" {len(checks)} - {name}" + (f" # {detail}" if detail else ""))
    sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="sight-long-run-")
    try:
        steps = []
        i = 0
        while len(steps) < N:
            steps += [{"do": f'type "note {i}" into Note'}, {"do": "click the Add button"},
                      {"do": f'expect text "Added note {i}"'}, {"do": 'expect text "Notes"'}]
            i += 1
        steps = steps[:N]
        test = {"name": f"{N} steps", "url": f"http://127.0.0.1:{server.server_port}/",
                "timeout": N * 3000, "steps": steps}
        path = os.path.join(tmp, "long.sightline.json")
        with open(path, "w") as f:
            json.dump(test, f)
        env = dict(os.environ, XDG_DATA_HOME=os.path.join(tmp, "data"),
                   XDG_CACHE_HOME=os.path.join(tmp, "cache"),
                   XDG_CONFIG_HOME=os.path.join(tmp, "config"))
        html, junit = os.path.join(tmp, "report.html"), os.path.join(tmp, "junit.xml")
        t0 = time.monotonic()
        proc = subprocess.run([SIGHTLINE, "run", path, "--report", html, "--junit", junit, "--json"],
                              env=env, capture_output=True, timeout=N * 3 + 120)
        secs = time.monotonic() - t0
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        check("the run exits 0", proc.returncode == 0,
              f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}"
              if proc.returncode else f"{secs:.0f} s")
        out = json.loads(proc.stdout)
        report = out["tests"][0]["attempts"][0]["report"]
        check(f"every one of the {N} steps (and the load) passed",
              report["counts"]["steps"] == N + 1 and report["counts"]["passed"] == N + 1,
              json.dumps(report["counts"]))
        sizes = {"html": os.path.getsize(html), "junit": os.path.getsize(junit),
                 "json": len(proc.stdout)}
        db = 0
        for root, _, files in os.walk(os.path.join(tmp, "data")):
            db += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        with open(html, encoding="utf-8") as f:
            text = f.read()
        embedded = text.count("background-image:url(data:")
        check("the HTML report embeds at most 100 screenshots and says it left the rest out",
              embedded <= 100 and ("Screenshots truncated" in text) == (N + 1 > 50),
              f"{embedded} embedded")
        check("the HTML report stays under 8 MB", sizes["html"] < 8 * 1024 * 1024, f"{sizes['html']} bytes")
        check("the JSON result stays under 1 KB a step", sizes["json"] < 1024 * (N + 1), f"{sizes['json']} bytes")
        check("the command's peak resident memory stays under 1 GiB", peak_mib < 1024, f"{peak_mib:.0f} MiB")
        print(f"# {N} steps in {secs:.0f} s ({1000 * secs / N:.0f} ms a step); peak RSS {peak_mib:.0f} MiB; "
              f"HTML {sizes['html']} B ({embedded} screenshots), JSON {sizes['json']} B, "
              f"JUnit {sizes['junit']} B, data folder (database and screenshots) {db} B")
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
