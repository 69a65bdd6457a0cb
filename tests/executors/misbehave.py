#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Executors that misbehave or probe, for tests/test-executor.c: misbehave.py MODE [FILE].

hang      writes its pid and a child's (both in its process group) to FILE, then sleeps
budget    clicks the first button over and over, past any step budget
models    asks budget/modelCall over and over
usage     reports a model call's usage before asking for one and with a bad count (each
          refused), then asks for two calls and reports each (the second's input tokens
          past Number.MAX_SAFE_INTEGER once added up); reports the refusals
unreported asks for two model calls and reports the usage of one
garbage   writes a line that is not JSON-RPC
exit      exits with status 3 after step/run
pixels    screenshot, fill the Secret param "password", screenshot again; reports each
          outcome and the names of its environment's variables
tap       asks for an unknown ref, then taps the "Sign in" button by its point in a
          screenshot; reports the refusal's code
wrong     fills the Secret param "password" into the Email field
"""

import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "executors"))
first_match = __import__("first-match")

mode = sys.argv[1]
sightline = first_match.Sightline()
step = sightline.read()["params"]

if mode == "hang":
    child = subprocess.Popen(["sleep", "300"])
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    time.sleep(300)
elif mode == "budget":
    tree = sightline.call("page/observe")["tree"]
    button = next(n for n in first_match.nodes(tree) if n.get("role") == "button")
    for _ in range(50):
        sightline.call("page/perform", action="click", ref=button["ref"])
    sightline.call("step/finish", verdict="pass", summary="Clicked fifty times.")
elif mode == "models":
    for _ in range(50):
        sightline.call("budget/modelCall")
    sightline.call("step/finish", verdict="pass", summary="Fifty model calls.")
elif mode == "usage":
    refusals = []
    for bad in ({"inputTokens": 1, "outputTokens": 1}, {"inputTokens": -1, "outputTokens": 0}):
        if bad["inputTokens"] == -1:
            sightline.call("budget/modelCall")
        try:
            sightline.call("budget/modelUsage", **bad)
            refusals.append("accepted")
        except first_match.StepError:
            refusals.append("refused")
    sightline.call("budget/modelUsage", inputTokens=120, outputTokens=30, cachedInputTokens=20,
                   costMicroUsd=450)
    sightline.call("budget/modelCall")
    usage = sightline.call("budget/modelUsage", inputTokens=9007199254740991, outputTokens=5,
                           costMicroUsd=50)["usage"]
    sightline.call("step/finish", verdict="pass",
                   summary=f"refusals={','.join(refusals)}; inputTokens={usage['inputTokens']}")
elif mode == "unreported":
    sightline.call("budget/modelCall")
    sightline.call("budget/modelUsage", inputTokens=10, outputTokens=2)
    sightline.call("budget/modelCall")
    sightline.call("step/finish", verdict="pass", summary="One of two calls reported.")
elif mode == "garbage":
    print("Starting the executor... (this is not JSON)", flush=True)
    time.sleep(30)
elif mode == "exit":
    sys.exit(3)
elif mode == "pixels":
    outcomes = []
    for attempt in ("before", "after"):
        try:
            shot = sightline.call("page/screenshot")
            outcomes.append(f"{attempt}={shot['mimeType']} {shot['width']}x{shot['height']} "
                            f"{len(shot['data'])}")
        except first_match.StepError as error:
            outcomes.append(f"{attempt}={error.code}")
        if attempt == "before":
            tree = sightline.call("page/observe")["tree"]
            field = next(n for n in first_match.nodes(tree)
                         if "password" in (n.get("name") or "").lower() and "ref" in n)
            sightline.call("page/perform", action="fill", ref=field["ref"], param="password")
    outcomes.append("env=" + " ".join(sorted(os.environ)))
    sightline.call("step/finish", verdict="pass", summary="; ".join(outcomes))
elif mode == "tap":
    tree = sightline.call("page/observe")["tree"]
    try:
        sightline.call("page/perform", action="click", ref="e999")
        refusal = "none"
    except first_match.StepError as error:
        refusal = str(error)
    shot = sightline.call("page/screenshot")
    button = next(n for n in first_match.nodes(tree)
                  if n.get("role") == "button" and n.get("name") == "Sign in")
    x, y, w, h = button["box"]
    tapped = sightline.call("page/tapAt", x=(x + w / 2) * shot["scale"],
                            y=(y + h / 2) * shot["scale"])
    sightline.call("step/finish", verdict="pass",
                   summary=f"refusal={refusal}; tapped={tapped.get('tapped')}")
elif mode == "wrong":
    tree = sightline.call("page/observe")["tree"]
    email = next(n for n in first_match.nodes(tree) if n.get("name") == "Email")
    sightline.call("page/perform", action="fill", ref=email["ref"], param="password")
    sightline.call("step/finish", verdict="pass", summary="Typed the password into Email.")
