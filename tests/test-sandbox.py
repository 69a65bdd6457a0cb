#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A sandbox that cannot start (issue #26, item 11).

WebKit runs its web processes inside bubblewrap; where bubblewrap cannot set
up its namespaces it fails, and WebKit used to abort the whole command with
SIGTRAP (exit 133, "Failed to fully launch dbus-proxy"). Here bubblewrap is
made to fail the way it does in such a container: in a private mount
namespace (unshare -m), a script that says "Creating new namespace failed"
and exits 1 is bind-mounted over it. `sightline screenshot` of a page on
loopback must then end with ENVIRONMENT_UNAVAILABLE (exit 3) and a hint
naming WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS; with that variable set by
the person, the same command works unsandboxed. Skips where the test may not
make a mount namespace (not root).

Usage: test-sandbox.py SIGHTLINE  (TAP output)
"""

import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading

SIGHTLINE = os.path.abspath(sys.argv[1])
checks = []


def check(name, ok, detail=""):
    checks.append(ok)
    print(("ok" if ok else "not ok") + f" {len(checks)} - {name}" + (f" # {detail}" if detail else ""))
    sys.stdout.flush()


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>Hi</title><h1>Hi</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None or not os.path.exists(bwrap) or \
            subprocess.run([unshare, "-m", "true"], capture_output=True).returncode != 0:
        print("1..0 # SKIP needs root and unshare -m to replace bubblewrap")
        return 0
    print("1..6")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "bwrap")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
        os.chmod(fake, 0o755)
        env = dict(os.environ, SIGHTLINE_DATA_DIR=os.path.join(tmp, "data"))
        env.pop("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS", None)

        def screenshot(output, extra_env=None):
            return subprocess.run(
                [unshare, "-m", "sh", "-c", 'mount --bind "$0" "$1" && shift && exec "$@"',
                 fake, bwrap, SIGHTLINE, "screenshot", url, "--output", output],
                env=dict(env, **(extra_env or {})), capture_output=True, text=True, timeout=180)

        broken = screenshot(os.path.join(tmp, "broken.png"))
        said = broken.stderr.strip().splitlines()[-1:] or [""]
        check("the command ends with exit 3, not a SIGTRAP", broken.returncode == 3,
              f"exit {broken.returncode}: {said[0][:300]}")
        check("it says ENVIRONMENT_UNAVAILABLE", "ENVIRONMENT_UNAVAILABLE" in broken.stderr)
        check("it names the sandbox and what bubblewrap said",
              "sandbox" in broken.stderr and "Creating new namespace failed" in broken.stderr)
        check("it names the way out", "WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS" in broken.stderr)
        check("no image was written", not os.path.exists(os.path.join(tmp, "broken.png")))

        unsandboxed = screenshot(os.path.join(tmp, "open.png"),
                                 {"WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS": "1"})
        check("with the sandbox turned off by the person, the same command works",
              unsandboxed.returncode == 0 and os.path.exists(os.path.join(tmp, "open.png")) and
              os.path.getsize(os.path.join(tmp, "open.png")) > 0,
              f"exit {unsandboxed.returncode}: {unsandboxed.stderr.strip()[-300:]}")
    server.shutdown()
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
