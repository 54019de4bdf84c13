#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A supervisor in Python with the logrx package: start a server, diagnose its
output as it comes, and when it fails relaunch it with the remediation applied.

    PYTHONPATH=build/python python3 docs/examples/supervisor.py --server sglang -- \\
        python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static 0.8
"""
import argparse
import os
import subprocess
import sys

import logrx


def run_once(argv, env, server):
    """Runs the server once; returns its exit status and logrx's report."""
    def on_finding(finding):
        # Act at once: a real supervisor could page someone or stop early here.
        if finding.severity == "fatal":
            print(f"fatal: {finding.rule} at line {finding.line}: {finding.title}", flush=True)

    with logrx.Analyzer(name=argv[0], server=server, launch_cmd=" ".join(argv),
                        on_finding=on_finding) as analyzer:
        child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert child.stdout is not None
        while chunk := child.stdout.read1(1 << 16):
            sys.stderr.buffer.write(chunk)  # pass the server's output through
            analyzer.feed(chunk)
        status = child.wait()
        analyzer.note_exit()
        return status, analyzer.finish()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", help="sglang, vllm, ... (default: told from the command)")
    parser.add_argument("--restart", type=int, default=2, help="relaunch at most N times")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    argv = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not argv:
        parser.error("give the server's command after --")
    env = dict(os.environ)
    for attempt in range(1, options.restart + 2):
        print(f"attempt {attempt}: {' '.join(argv)}", flush=True)
        status, report = run_once(argv, env, options.server)
        ready = bool(report.runs) and report.runs[-1].reached_ready
        if status == 0 or ready:
            print(f"attempt {attempt}: ready" if ready else f"attempt {attempt}: exited cleanly")
            return 0
        for item in report.remediation:
            tag = "apply" if item.applicable and not item.alternative else "advice"
            print(f"{tag}: {item} ({item.why})" if item.why else f"{tag}: {item}")
        if attempt > options.restart:
            break
        plan = logrx.plan_relaunch(argv, report, server=options.server)
        if not plan.changed:
            print("nothing new to apply; not relaunching")
            break
        print("relaunch:", plan.command_line, flush=True)
        argv = plan.argv
        env.update(plan.env)
    return 1


if __name__ == "__main__":
    sys.exit(main())
