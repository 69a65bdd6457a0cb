#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A custom executor for Sightline that calls no model: it acts by a fixed rule.

act:    fills every param into the text field whose name holds the param's name (a
        Secret by its param, so Sightline types it and this program never sees it),
        then clicks the first button whose name shares a word with the instruction.
assert: passes when every text quoted in the instruction ("…") is in the page.

Sightline starts it per step and speaks JSON-RPC 2.0 to it, one message per line, over
stdin and stdout (docs/executor.md). Name it in sightline.json:

    "agents": { "rules": { "executor": { "command": ["python3", "executors/first-match.py"] } } }

With SIGHTLINE_EXECUTOR_TRANSCRIPT set (in the executor's "env"), every line it reads
and writes is appended to that file.
"""

import json
import os
import re
import sys

FIELD_ROLES = {"textbox", "searchbox", "combobox", "spinbutton"}


class StepError(Exception):
    """Sightline refused a call: code and message from its JSON-RPC error."""

    def __init__(self, error):
        super().__init__(error.get("message", ""))
        self.code = (error.get("data") or {}).get("code")


class Sightline:
    def __init__(self):
        self.next_id = 1
        path = os.environ.get("SIGHTLINE_EXECUTOR_TRANSCRIPT")
        self.transcript = open(path, "a", encoding="utf-8") if path else None

    def _log(self, direction, line):
        if self.transcript:
            self.transcript.write(f"{direction} {line.rstrip()}\n")
            self.transcript.flush()

    def read(self):
        line = sys.stdin.readline()
        if not line:
            # Sightline closed our input: the step is over.
            sys.exit(0)
        self._log("<", line)
        return json.loads(line)

    def send(self, message):
        line = json.dumps(message, ensure_ascii=False)
        self._log(">", line)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def call(self, method, **params):
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == request_id:
                if "error" in message:
                    raise StepError(message["error"])
                return message["result"]


def nodes(node):
    """Every node of an observation's tree, in document order."""
    if not isinstance(node, dict):
        return
    yield node
    for child in node.get("children") or []:
        yield from nodes(child)


def words(text):
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 1}


def act(sightline, step):
    observation = sightline.call("page/observe")
    done = []
    for param in step.get("params") or {}:
        field = next((n for n in nodes(observation["tree"])
                      if n.get("role") in FIELD_ROLES and "ref" in n
                      and param.lower() in (n.get("name") or "").lower()), None)
        if field is None:
            continue
        sightline.call("page/perform", action="fill", ref=field["ref"], param=param)
        done.append(f"filled {param}")
    wanted = words(step["instruction"])
    button = next((n for n in nodes(observation["tree"])
                   if n.get("role") == "button" and "ref" in n
                   and wanted & words(n.get("name") or "")), None)
    if button is None:
        return {"verdict": "fail",
                "summary": "No button's name shares a word with the instruction."}
    sightline.call("page/perform", action="click", ref=button["ref"])
    done.append(f"clicked the button \"{button.get('name')}\"")
    summary = "; ".join(done)
    return {"verdict": "pass", "summary": summary[0].upper() + summary[1:] + "."}


def check(sightline, step):
    quoted = re.findall(r"[\"“]([^\"”]+)[\"”]", step["instruction"])
    if not quoted:
        return {"verdict": "blocked", "blocked_reason": "setup",
                "summary": "The assertion quotes no text to look for."}
    text = sightline.call("page/observe")["text"]
    missing = [q for q in quoted if q not in text]
    if missing:
        return {"verdict": "fail", "summary": f"The page does not show \"{missing[0]}\"."}
    return {"verdict": "pass", "summary": "The page shows " +
            ", ".join(f"\"{q}\"" for q in quoted) + "."}


def main():
    sightline = Sightline()
    message = sightline.read()
    if message.get("method") != "step/run":
        sys.exit(f"expected step/run, got {message.get('method')}")
    step = message["params"]
    try:
        outcome = act(sightline, step) if step["kind"] == "act" else check(sightline, step)
    except StepError as error:
        # Sightline ends the step itself when a budget or the deadline ran out.
        outcome = {"verdict": "fail", "summary": f"Sightline refused a call: {error}"}
    sightline.call("step/finish", **outcome)


if __name__ == "__main__":
    main()
