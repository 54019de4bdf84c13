# SPDX-License-Identifier: MIT
"""logrx.Analyzer: streaming, callbacks, context manager, errors."""
import pytest

import logrx

NOT_ENOUGH = "sglang/scenario1-not-enough-memory.log"


def test_findings_arrive_while_feeding(corpus):
    data = (corpus / NOT_ENOUGH).read_bytes()
    seen = []
    returned = []
    with logrx.Analyzer(name="live.log", on_finding=seen.append) as analyzer:
        # Small pieces that split lines anywhere, as bytes and as text.
        for i in range(0, len(data), 7):
            piece = data[i:i + 7]
            returned += analyzer.feed(piece if i % 2 else piece.decode("utf-8", "surrogateescape"))
        assert any(f.rule == "sglang.memory.not-enough-memory" for f in seen), "fatal not reported live"
    report = analyzer.report
    assert report is not None
    assert [f.rule for f in returned] == [f.rule for f in seen[:len(returned)]]
    assert {f.rule for f in seen} == {f.rule for f in report.findings}
    assert report.findings[0].file == "live.log"
    whole = logrx.scan(corpus / NOT_ENOUGH)
    assert [(f.rule, f.line) for f in report.findings] == [(f.rule, f.line) for f in whole.findings]


def test_finish_is_idempotent_and_feeding_after_it_fails(corpus):
    analyzer = logrx.Analyzer()
    analyzer.feed((corpus / NOT_ENOUGH).read_text())
    first = analyzer.finish()
    assert analyzer.finish() is first
    with pytest.raises(logrx.Error):
        analyzer.feed("more\n")
    analyzer.close()
    assert analyzer.finish() is first  # the report outlives the handle
    with pytest.raises(logrx.Error, match="closed"):
        analyzer.feed("more\n")


def test_callback_exceptions_surface_from_feed(corpus):
    def boom(_finding):
        raise RuntimeError("callback failed")

    analyzer = logrx.Analyzer(on_finding=boom)
    with pytest.raises(RuntimeError, match="callback failed"):
        analyzer.feed((corpus / NOT_ENOUGH).read_bytes())
    analyzer.close()


def test_note_exit_reports_a_launch_that_died_silently():
    log = ("[2026-05-23 08:02:10] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1)\n"
           "[2026-05-23 08:02:12] Load weight begin. avail mem=78.50 GB\n")
    alive = logrx.Analyzer(server="sglang")
    alive.feed(log)
    dead = logrx.Analyzer(server="sglang")
    dead.feed(log)
    dead.note_exit()
    assert [f.rule for f in alive.finish().findings] == ["logrx.run.ends-before-ready"]
    assert [f.rule for f in dead.finish().findings] == ["logrx.run.died-before-ready"]


def test_missing_rules_are_errors():
    with pytest.raises(logrx.Error, match="does not exist"):
        logrx.Analyzer(["/nonexistent/rules"])


def test_poll_reports_a_traceback_the_server_hangs_in():
    analyzer = logrx.Analyzer(server="sglang", quiet_period=2.0)
    # A traceback whose process hangs after its last line: no line ends the event.
    held = analyzer.feed("Traceback (most recent call last):\n"
                         '  File "model_runner.py", line 402, in init_memory_pool\n'
                         "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                         "Current value: mem_fraction_static=0.8\n")
    assert held == []
    fed_at = analyzer._last_feed
    assert analyzer.poll(now=fed_at + 1.0) == []  # not quiet long enough
    found = analyzer.poll(now=fed_at + 2.5)
    assert [f.rule for f in found] == ["sglang.memory.not-enough-memory"]
    assert analyzer.poll(now=fed_at + 10) == []  # reported once
    assert "sglang.memory.not-enough-memory" in {f.rule for f in analyzer.finish().findings}
