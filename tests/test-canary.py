#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The secret canary through the whole product (issue #13, item 5).

One unique password, declared as a credential of the project file and read
from the environment, goes through every feature that can carry a secret:
a test suite (`sightline run`, a direct step typing {password}), act with a
Secret param (`sightline act`, the scripted model fills {password}), the MCP
server (`sightline mcp`: create_session, act with the Secret, get_report), the
stored runs (`sightline runs`, `sightline report` as HTML, JSON and JUnit).
Every command runs with G_MESSAGES_DEBUG=all. Then every byte that came out is
searched for the canary in every encoding: plain, URL-encoded, base64 (at the
three alignments), HTML-escaped, JSON-escaped: the commands' output and logs,
every file under the data, cache and config folders (the SQLite database and
its WAL, reports, screenshots, trace cache), the reports written, and the body
of every request the model server received. The test also checks the canary
was really used: the demo site's sign-in accepted it.

Usage: test-canary.py SIGHTLINE SCRIPTED-MODEL-SERVER  (TAP output)
"""

import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

SIGHTLINE, MODEL_SERVER = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
# The demo site's password, so that signing in works; unique enough that it
# appears nowhere else (the demo site's own banner goes to a log we skip).
CANARY = "harbor-trial-2024"

checks = []


def check(name, ok, detail=""):
    checks.append((name, ok, detail))
    print(("ok" if ok else "not ok") + f" {len(checks)} - {name}" + (f": {detail}" if detail and not ok else ""))
    sys.stdout.flush()


def encodings(secret):
    b = secret.encode()
    forms = {
        "plain": [b],
        "url": [urllib.parse.quote(secret, safe="").encode(), urllib.parse.quote_plus(secret).encode()],
        "html": [html.escape(secret).encode()],
        "json": [json.dumps(secret)[1:-1].encode(), json.dumps(secret, ensure_ascii=True)[1:-1].encode()],
        "base64": [],
    }
    # The canary inside a longer base64 stream: encode it at each of the three
    # alignments and keep the characters that do not depend on its neighbours.
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + b + b"\0\0")
        start = (pad * 4 + 2) // 3 + 1
        end = ((pad + len(b)) * 4) // 3 - 1
        forms["base64"].append(enc[start:end])
        forms["base64"].append(base64.urlsafe_b64encode(b"\0" * pad + b + b"\0\0")[start:end])
    return forms


FORMS = encodings(CANARY)


def leaks(data):
    found = []
    for name, variants in FORMS.items():
        for v in variants:
            if v and v in data:
                found.append(name)
                break
    return found


# The search finds the canary wherever it is, in each encoding.
samples = {
    "plain": f"x{CANARY}y".encode(),
    "url": ("q=" + urllib.parse.quote(CANARY, safe="")).encode(),
    "html": f"<p>{html.escape(CANARY)}</p>".encode(),
    "json": json.dumps({"v": CANARY}).encode(),
}
for pad in range(3):
    samples[f"base64+{pad}"] = base64.b64encode(b"ab"[:pad] + b"header:" + CANARY.encode() + b";tail")
check("the search sees the canary in every encoding",
      all(leaks(sample) for sample in samples.values()) and not leaks(b"nothing to see here"),
      {name: leaks(sample) for name, sample in samples.items()})

home = tempfile.mkdtemp(prefix="sightline-canary-")
env = dict(os.environ)
env.update({
    "HOME": home,
    "XDG_DATA_HOME": os.path.join(home, "data"),
    "XDG_CONFIG_HOME": os.path.join(home, "config"),
    "XDG_CACHE_HOME": os.path.join(home, "cache"),
    "G_MESSAGES_DEBUG": "all",
    "GSETTINGS_BACKEND": "memory",
    "NO_AT_BRIDGE": "1",
    "GTK_A11Y": "none",
    "CANARY_PASSWORD": CANARY,
})
for key in ("SIGHTLINE_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
    env.pop(key, None)
work = os.path.join(home, "work")
os.makedirs(work)
outputs = {}     # name -> bytes that a command printed
children = []


def start(argv, pattern, name):
    """Starts a server and waits for the line matching @pattern."""
    log = open(os.path.join(home, name + ".log"), "wb")
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, env=env, cwd=work)
    children.append((child, name))
    deadline = time.time() + 30
    line = b""
    while time.time() < deadline:
        line = child.stdout.readline()
        m = re.search(pattern, line.decode(errors="replace"))
        if m:
            return child, m
        if not line and child.poll() is not None:
            break
    log.close()
    with open(os.path.join(home, name + ".log"), "rb") as f:
        raise RuntimeError(f"{name} did not start: {line!r} {f.read()[-500:]!r}")


def run(name, argv, timeout=180, stdin=None):
    p = subprocess.run([SIGHTLINE] + argv, env=env, cwd=work, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    outputs[name] = p.stdout + b"\n" + p.stderr
    return p


try:
    demo, m = start(["stdbuf", "-oL", SIGHTLINE, "demo-site", "--port", "0"], r"(http://127\.0\.0\.1:\d+)/", "demo-site")
    site = m.group(1)
    record = os.path.join(home, "model-requests.jsonl")
    script = os.path.join(home, "script.json")
    # act on /login: fill Email and the password by its param, sign in, done.
    # The refs come from the page's own observation (rules match any request).
    snap = run("snapshot", ["snapshot", site + "/login", "--format", "json"])
    refs = {}

    def walk(node):
        if isinstance(node, dict):
            if node.get("role") == "textbox" and node.get("name") in ("Email", "Password"):
                refs[node["name"]] = node["ref"]
            if node.get("role") == "button" and node.get("name") == "Sign in":
                refs["Sign in"] = node["ref"]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(snap.stdout))
    check("the login page has Email, Password and Sign in", len(refs) == 3, refs)
    act_answers = [
        {"tool_calls": [{"name": "fill", "arguments": {"ref": refs.get("Email"), "value": "member@example.test"}},
                        {"name": "fill", "arguments": {"ref": refs.get("Password"), "value": "{password}"}}]},
        {"tool_calls": [{"name": "click", "arguments": {"ref": refs.get("Sign in")}}]},
        {"tool_calls": [{"name": "done", "arguments": {"verdict": "pass", "summary": "Signed in."}}]},
    ]
    with open(script, "w") as f:
        json.dump(act_answers * 2, f)   # once for `sightline act`, once over MCP
    model, m = start([MODEL_SERVER, "--script", script, "--record", record], r"OPENAI_BASE_URL=(\S+)", "model")
    base_url = m.group(1)

    with open(os.path.join(work, "sightline.json"), "w") as f:
        json.dump({
            "agents": {"default": {"model": "openai:scripted", "baseUrl": base_url, "apiKeyEnv": "SCRIPTED_KEY"}},
            "credentials": {"member.password": {"purpose": "password", "allowedOrigins": [site],
                                                 "source": {"env": "CANARY_PASSWORD"}}},
            "defaults": {"actionTimeout": 10000},
            # act's passing sign-in leaves a trace; MCP's act replays it, typing the
            # secret through the same fill with no model call.
            "traceCache": True,
        }, f)
    env["SCRIPTED_KEY"] = "not-a-secret"
    with open(os.path.join(work, "sign-in.sightline.json"), "w") as f:
        json.dump({"name": "Sign in with the stored password", "url": "/login", "steps": [
            {"do": "type \"member@example.test\" into Email"},
            {"do": "type {password} into Password", "params": {"password": {"secret": "member.password"}}},
            {"do": "click the Sign in button"},
            {"do": "expect text \"Northwind Logistics\""}]}, f)

    # 1. A suite run with its reports.
    p = run("run", ["run", "sign-in.sightline.json", "--base-url", site, "--report", os.path.join(work, "report"),
                    "--junit", os.path.join(work, "junit.xml"), "--json"])
    check("sightline run signed in with the canary (exit 0)", p.returncode == 0, outputs["run"][-400:])

    # 1b. The password aimed at the plain Email field: refused, nothing typed.
    with open(os.path.join(work, "into-email.sightline.json"), "w") as f:
        json.dump({"name": "The password into Email", "url": "/login", "steps": [
            {"do": "type {password} into Email", "params": {"password": {"secret": "member.password"}}}]}, f)
    p = run("run-into-email", ["run", "into-email.sightline.json", "--base-url", site,
                               "--report", os.path.join(work, "report-into-email")])
    check("the password into Email is refused (exit 2, POLICY_DENIED)",
          p.returncode == 2 and b"POLICY_DENIED" in outputs["run-into-email"], outputs["run-into-email"][-400:])

    # 2. act with a Secret param.
    p = run("act", ["act", site + "/login", "sign in as the member", "--params",
                    json.dumps({"password": {"secret": "member.password"}}), "--json"])
    check("sightline act signed in with the canary (exit 0)", p.returncode == 0, outputs["act"][-400:])
    check("act landed on the dashboard", b"Signed in" in p.stdout, p.stdout[-300:])

    # 3. MCP over stdio: a session, act with the Secret, the report.
    def rpc(i, method, params):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n"

    mcp = subprocess.Popen([SIGHTLINE, "mcp"], env=env, cwd=work, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=open(os.path.join(home, "mcp.log"), "wb"))
    children.append((mcp, "mcp"))

    def call(i, method, params):
        mcp.stdin.write(rpc(i, method, params).encode())
        mcp.stdin.flush()
        while True:
            line = mcp.stdout.readline()
            if not line:
                raise RuntimeError("sightline mcp closed")
            outputs.setdefault("mcp", b"")
            outputs["mcp"] += line
            msg = json.loads(line)
            if msg.get("id") == i:
                return msg

    call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "canary", "version": "1"}})
    mcp.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode())
    session = call(2, "tools/call", {"name": "create_session", "arguments": {"startUrl": site + "/login"}})
    sid = (session.get("result", {}).get("structuredContent") or {}).get("id")
    check("MCP create_session", isinstance(sid, str), session)
    acted = call(3, "tools/call", {"name": "act", "arguments": {
        "sessionId": sid, "instruction": "sign in as the member",
        "params": {"password": {"secret": "member.password"}}}})
    check("MCP act signed in", acted.get("result", {}).get("isError") is not True and
          (acted.get("result", {}).get("structuredContent") or {}).get("verdict") == "pass",
          json.dumps(acted)[:400])
    check("MCP act replayed act's trace, the secret filled again with no model call",
          "self-finalized" in json.dumps(acted), json.dumps(acted)[:600])
    call(4, "tools/call", {"name": "stop_session", "arguments": {"sessionId": sid}})
    mcp.stdin.close()
    mcp.wait(timeout=30)

    # 4. The stored runs, every way they come out.
    p = run("runs", ["runs", "--json"])
    ids = re.findall(r'"(run_[a-z0-9]+)"', p.stdout.decode())
    check("runs were stored", len(ids) >= 1, p.stdout[-300:])
    for n, run_id in enumerate(sorted(set(ids))):
        for fmt in ("html", "json", "junit"):
            run(f"report-{n}-{fmt}", ["report", run_id, "--format", fmt,
                                      "--output", os.path.join(work, f"report-{n}.{fmt}")])

    # The canary was used: the demo site accepted it (sign-in passed above), and
    # the page saw it (the model server never did).
    for child, name in children:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()

    # Search everything.
    searched = 0
    leaked = []
    for name, data in outputs.items():
        searched += 1
        if leaks(data):
            leaked.append(f"output of {name}: {leaks(data)}")
    for root, _, files in os.walk(home):
        for fname in files:
            path = os.path.join(root, fname)
            if not os.path.isfile(path) or os.path.islink(path):
                continue  # sockets and the like
            if fname in ("demo-site.log",) or path.startswith(os.path.join(home, "work", "sightline.json")):
                continue  # the demo site's banner prints its password for people to read
            if fname == "script.json":
                continue
            with open(path, "rb") as f:
                data = f.read()
            searched += 1
            if leaks(data):
                leaked.append(f"{os.path.relpath(path, home)}: {leaks(data)}")
    check(f"the canary is in none of {searched} outputs and files, in any encoding", not leaked, leaked)
    with open(record, "rb") as f:
        bodies = f.read()
    check("the model server received requests", bodies.count(b"\n") >= 3, bodies.count(b"\n"))
    check("the model saw the secret's name, not its value",
          b"member.password" in bodies or b"{password}" in bodies, "")
except Exception as error:  # noqa: BLE001 - any failure is a failed check
    check(f"no exception ({error})", False, repr(error))
finally:
    for child, name in children:
        if child.poll() is None:
            child.kill()
    shutil.rmtree(home, ignore_errors=True)

print(f"1..{len(checks)}")
sys.exit(0 if all(ok for _, ok, _ in checks) else 1)
