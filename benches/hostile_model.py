#!/usr/bin/env python3
"""A hostile model for measuring vaultbench's limits (not a test).

  hostile_model.py suite DIR           write the scenario suites under DIR/<scenario>/evals
  hostile_model.py serve MODE PORTFILE serve an OpenAI-compatible /v1/chat/completions on
                                       127.0.0.1 (a free port, written to PORTFILE) that
                                       misbehaves as MODE says, then answers "done"

Modes (the first reply of each run; every later reply is the final answer):
  giant-write    one write_file of 200 MB
  big-write      one write_file of 3 MB (over the write cap, under the conversation cap)
  many-reads     300 read_file calls of the same 2 MB note in one reply
  many-searches  10,000 find_files_by_content calls in one reply
  deep-args      update_frontmatter with a value nested as deep as JSON parsers allow
  mixed          a 3 MB write_file, then 300 reads of a 2 MB note, then 100 reads of a
                 200 KB note, then more of the same until the run ends (the suite has 8 tasks)

benches/hostile.sh drives it; see there for what is measured.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def task(tid, **extra):
    t = {
        "id": tid,
        "description": "hostile scenario",
        "userMessage": "Do the thing.",
        "difficulty": "T1",
        "category": "retrieval",
        "fixture": "f",
        "expectedTools": [],
        "outputMatchers": [{"type": "contains", "value": "done"}],
        "maxTurns": 4,
        "timeoutMs": 3000,
    }
    t.update(extra)
    return json.dumps(t, indent=2)


# Block sequences nest without indentation (`- - - x`): 2000 levels in 4 KB.
# (Flow collections, `[[[`, stop at the YAML scanner's own limit of 255.)
def deep_yaml(levels):
    return "---\nk:\n  " + "- " * levels + "x\n---\nbody\n"


# 2000 levels overflow a 2 MiB worker thread's stack; the main thread's 8 MiB
# (publish) takes more.
DEEP_YAML = deep_yaml(2000)
CATASTROPHIC_LINE = "a" * 30 + "!\n"


def suite(root):
    def scenario(name, tasks, fixtures, references=None):
        base = os.path.join(root, name, "evals")
        for rel, text in fixtures.items():
            write(os.path.join(base, "fixtures", rel), text)
        for tid, text in tasks.items():
            write(os.path.join(base, "tasks", tid + ".json"), text)
        for tid, ref in (references or {}).items():
            write(os.path.join(base, "references", tid + ".json"), json.dumps(ref))

    deep = {"f/deep.md": DEEP_YAML, "f/plain.md": "plain\n"}
    scenario(
        "yaml-update",
        {"yaml-update": task("yaml-update")},
        deep,
        {"yaml-update": {"steps": [{"tool": "update_frontmatter", "args": {"path": "eval-scratch/deep.md", "key": "k", "value": 1}}], "answer": "done"}},
    )
    scenario(
        "yaml-assert",
        {"yaml-assert": task("yaml-assert", vaultAssertions=[{"type": "frontmatterEquals", "path": "eval-scratch/deep.md", "key": "k", "value": 1}])},
        deep,
        {"yaml-assert": {"steps": [], "answer": "done"}},
    )
    scenario(
        "yaml-session",
        {"yaml-session": task("yaml-session", setup=[{"path": "gemini-scribe/Agent-Sessions/s.md", "from": "f/deep.md"}])},
        deep,
        {"yaml-session": {"steps": [{"tool": "recall_sessions", "args": {}}], "answer": "done"}},
    )
    scenario(
        "yaml-skill",
        {"yaml-skill": task("yaml-skill", setup=[{"path": "gemini-scribe/Skills/deep/SKILL.md", "from": "f/deep.md"}])},
        deep,
        {"yaml-skill": {"steps": [], "answer": "done"}},
    )
    write(os.path.join(root, "yaml-publish", "docs", "index.md"), "---\ntitle: Home\n---\n# Home\n")
    write(os.path.join(root, "yaml-publish", "docs", "deep.md"), deep_yaml(50000))
    os.makedirs(os.path.join(root, "yaml-publish", "baselines"), exist_ok=True)

    regex = {"f/long.md": CATASTROPHIC_LINE}
    scenario(
        "regex-tool",
        {"regex-tool": task("regex-tool")},
        regex,
        {"regex-tool": {"steps": [{"tool": "find_files_by_content", "args": {"query": "(a+)+$", "useRegex": True}}], "answer": "done"}},
    )
    scenario(
        "regex-matcher",
        {"regex-matcher": task("regex-matcher", outputMatchers=[{"type": "regex", "value": "(a|a)*b"}])},
        regex,
        {"regex-matcher": {"steps": [], "answer": "a" * 30}},
    )
    # For `rescore`: solved quickly as run (a short answer); the script then
    # lengthens the recorded answer so that rescoring meets the catastrophic case.
    scenario(
        "rescore",
        {"rescore": task("rescore", outputMatchers=[{"type": "regex", "value": "(a|a)*b"}])},
        regex,
        {"rescore": {"steps": [], "answer": "a" * 5}},
    )
    scenario(
        "regex-assertion",
        {"regex-assertion": task("regex-assertion", vaultAssertions=[{"type": "fileMatches", "path": "eval-scratch/long.md", "value": "^(a+)+$"}])},
        regex,
        {"regex-assertion": {"steps": [], "answer": "done"}},
    )
    big = {"f/big.md": ("x" * 99 + "\n") * 20000, "f/plain.md": "plain\n"}
    for mode in ("big-write", "many-reads", "many-searches", "deep-args"):
        scenario(mode, {mode: task(mode)}, big)
    mixed = dict(big)
    mixed["f/mid.md"] = ("z" * 99 + "\n") * 2000
    scenario("mixed", {f"mixed-{i}": task(f"mixed-{i}", timeoutMs=60000, maxTurns=8) for i in range(8)}, mixed)
    # Sending 200 MB over loopback takes seconds of its own.
    scenario("giant-write", {"giant-write": task("giant-write", timeoutMs=60000)}, big)


def first_reply(mode, turn=0):
    def call(i, name, args):
        return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

    def reads(note, n):
        return [call(i, "read_file", {"path": "eval-scratch/" + "./" * i + note}) for i in range(n)]

    if mode == "mixed":
        if turn % 3 == 0:
            calls = [call(0, "write_file", {"path": f"eval-scratch/w{turn}.md", "content": "y" * (3 * 1024 * 1024)})]
        elif turn % 3 == 1:
            calls = reads("big.md", 300)
        else:
            calls = reads("mid.md", 100)
        return {"role": "assistant", "content": None, "tool_calls": calls}

    if mode == "giant-write":
        calls = [call(0, "write_file", {"path": "eval-scratch/huge.md", "content": "y" * (200 * 1024 * 1024)})]
    elif mode == "big-write":
        calls = [call(0, "write_file", {"path": "eval-scratch/big-write.md", "content": "y" * (3 * 1024 * 1024)})]
    elif mode == "many-reads":
        # Spelled differently each time (`./` parts), so the loop detector does not stop them.
        calls = [call(i, "read_file", {"path": "eval-scratch/" + "./" * i + "big.md"}) for i in range(300)]
    elif mode == "many-searches":
        calls = [call(i, "find_files_by_content", {"query": f"needle{i}"}) for i in range(10000)]
    elif mode == "deep-args":
        value = 0
        for _ in range(120):
            value = [value]
        calls = [call(0, "update_frontmatter", {"path": "eval-scratch/plain.md", "key": "k", "value": value})]
    else:
        raise SystemExit(f"unknown mode {mode}")
    return {"role": "assistant", "content": None, "tool_calls": calls}


def serve(mode, portfile):
    first = json.dumps(first_reply(mode)) if mode != "mixed" else None

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            request = json.loads(self.rfile.read(length))
            assistant_turns = sum(1 for m in request["messages"] if m["role"] == "assistant")
            if mode == "mixed":
                message = json.dumps(first_reply(mode, assistant_turns))
            elif assistant_turns == 0:
                message = first
            else:
                message = json.dumps({"role": "assistant", "content": "done"})
            body = (
                '{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":'
                + message
                + '}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}'
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(portfile, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "suite":
        suite(sys.argv[2])
    elif sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
