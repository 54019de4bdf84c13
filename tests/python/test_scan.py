# SPDX-License-Identifier: MIT
"""logrx.scan, Report and Finding against the logrx program's JSON."""
import io
import json
import os
import subprocess

import pytest

import logrx

NOT_ENOUGH = "sglang/scenario1-not-enough-memory.log"


def cli_json(exe, *args):
    env = dict(os.environ)
    env.pop("LOGRX_RULES_PATH", None)
    done = subprocess.run([exe, "scan", "--format", "json", "--fail-on", "never", *args],
                          capture_output=True, check=True, env=env)
    return json.loads(done.stdout)


def test_scan_finds_the_fatal_finding_and_its_fix(corpus):
    report = logrx.scan(corpus / NOT_ENOUGH)
    fatal = [f for f in report.findings if f.severity == "fatal"]
    assert [f.rule for f in fatal] == ["sglang.memory.not-enough-memory"]
    finding = fatal[0]
    assert isinstance(finding, logrx.Finding)
    assert finding.line == 23 and finding.category == "memory_pressure"
    assert finding.file == str(corpus / NOT_ENOUGH)
    assert not finding.stale
    assert "--mem-fraction-static" in finding.message
    fix = [r for r in finding.remediation if r.name == "--mem-fraction-static"]
    assert fix and fix[0].kind == "flag" and fix[0].value == "0.85"
    # Consequences name their cause.
    killed = [f for f in report.findings if f.rule == "common.process.killed"]
    assert killed and killed[0].root_cause == logrx.RootCause("sglang.memory.not-enough-memory", 23)
    merged = {r.name: r.value for r in report.remediation}
    assert merged["--mem-fraction-static"] == "0.85"
    assert report.summary.worst_severity == "fatal"
    assert report.summary.findings == len(report.findings) == 5
    assert report.runs[0].server == "sglang" and report.runs[0].facts["mem_fraction_static"] == 0.8


def test_to_dict_is_the_scan_json_document(corpus, logrx_exe):
    path = str(corpus / NOT_ENOUGH)
    assert logrx.scan(path).to_dict() == cli_json(logrx_exe, path)


def test_launch_command_and_since_mark_stale_output(corpus, logrx_exe):
    path = corpus / "sglang/scenario2-stale-log-vs-launch-command.log"
    args = (corpus / "sglang/scenario2-stale-log-vs-launch-command.args").read_text().splitlines()
    launch_cmd, since = args[1], args[3]
    report = logrx.scan(path, launch_cmd=launch_cmd, since=since)
    rules = {f.rule: f.stale for f in report.findings}
    assert rules == {"logrx.stale.command-mismatch": False, "logrx.stale.predates-launch": False,
                     "sglang.config.spec-radix-no-buffer": True}
    assert report.to_dict() == cli_json(logrx_exe, "--launch-cmd", launch_cmd, "--since", since, str(path))
    # Without the launch context the same log is read as current.
    plain = logrx.scan(path)
    assert [(f.rule, f.stale) for f in plain.findings] == [("sglang.config.spec-radix-no-buffer", False)]


def test_file_objects_binary_and_text(corpus):
    path = corpus / NOT_ENOUGH
    expected = [(f.rule, f.line) for f in logrx.scan(path).findings]
    with open(path, "rb") as binary:
        assert [(f.rule, f.line) for f in logrx.scan(binary).findings] == expected
    with open(path, encoding="utf-8") as text:
        report = logrx.scan(text)
        assert [(f.rule, f.line) for f in report.findings] == expected
        assert report.findings[0].file == str(path)
    anonymous = logrx.scan(io.BytesIO(path.read_bytes()))
    assert [(f.rule, f.line) for f in anonymous.findings] == expected
    assert anonymous.findings[0].file == "<stream>"


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(logrx.Error, match="No such file"):
        logrx.scan(tmp_path / "absent.log")


def test_secrets_are_redacted_unless_asked(tmp_path):
    log = tmp_path / "secret.log"
    token = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7"
    log.write_text(f"OSError: 401 Client Error for url with token {token}: Unauthorized\n")
    redacted = logrx.scan(log).to_json()
    assert token not in redacted
    assert token in logrx.scan(log, redact=False).to_json()


def test_report_findings_are_typed_dataclasses(corpus):
    report = logrx.scan(corpus / NOT_ENOUGH)
    finding = report.findings[0]
    assert finding.to_dict() == report.to_dict()["findings"][0]
    with pytest.raises(Exception):
        finding.rule = "changed"  # frozen
    assert json.loads(report.to_json()) == report.to_dict()


def test_scan_reads_compressed_logs_and_reports_damage(corpus, data):
    plain = logrx.scan(corpus / NOT_ENOUGH)
    for name in ("log.gz", "log.zst", "log.xz", "log.bz2"):
        report = logrx.scan(data / "compressed" / name)
        assert [f.rule for f in report.findings] == [f.rule for f in plain.findings], name
        assert report.raw["summary"]["compression"] in ("gzip", "zstd", "xz", "bzip2")
        assert report.input_error == ""
        assert report.runs[0].file == str(data / "compressed" / name)
        assert list(report.remediation_by_file) == [str(data / "compressed" / name)]
    with open(data / "compressed" / "log.gz", "rb") as handle:
        assert [f.rule for f in logrx.scan(handle).findings] == [f.rule for f in plain.findings]
    cut = logrx.scan(data / "compressed" / "truncated.gz")
    assert "gzip" in cut.input_error


def test_scan_on_several_threads_reports_what_one_thread_does(corpus, tmp_path):
    # A few MiB of serving traffic around a real failure: long enough for
    # feed_all to cut it into windows surveyed on other threads.
    failure = (corpus / NOT_ENOUGH).read_text()
    traffic = "".join(
        f"[2026-07-01 16:{10 + i // 6000:02d}:00 TP{i % 4}] Decode batch, #running-req: {i % 50}, "
        f"#token: {i * 7}, token usage: 0.3{i % 10}, cuda graph: True, gen throughput (token/s): "
        f"1234.5, #queue-req: 0, \n" for i in range(40000))
    log = tmp_path / "long.log"
    log.write_text(failure + traffic + failure + traffic)
    one = logrx.scan(log, threads=1)
    assert one.summary.findings > 0
    for threads in (0, 2, 3):
        assert logrx.scan(log, threads=threads).to_dict() == one.to_dict(), threads
    with pytest.raises(ValueError):
        logrx.Analyzer().feed_all(b"", threads=-1)
