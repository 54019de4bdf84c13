# SPDX-License-Identifier: MIT
"""apply_remediation: the rules of `logrx run --apply-remediation`."""
import pytest

import logrx

NOT_ENOUGH = "sglang/scenario1-not-enough-memory.log"
ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-27B",
        "--mem-fraction-static", "0.8"]


@pytest.fixture
def report(corpus):
    return logrx.scan(corpus / NOT_ENOUGH)


def test_value_replaced_in_place_and_advice_left_out(report):
    argv = logrx.apply_remediation(ARGV, report)
    assert argv[:5] == ARGV[:5]
    assert argv[argv.index("--mem-fraction-static") + 1] == "0.85"
    # --max-running-requests has no value the log can give: advice, not an argument.
    assert "--max-running-requests" not in argv
    plan = logrx.plan_relaunch(ARGV, report)
    assert plan.changed and plan.argv == argv
    assert any("--mem-fraction-static" in a for a in plan.applied)


def test_findings_and_environment(report):
    fatal = [f for f in report.findings if f.severity == "fatal"]
    assert logrx.apply_remediation(ARGV, fatal)[-1] == "0.85"
    env = {}
    items = [logrx.Remediation(kind="env", name="PYTORCH_CUDA_ALLOC_CONF", value="expandable_segments:True",
                               raw={"env": "PYTORCH_CUDA_ALLOC_CONF", "value": "expandable_segments:True"})]
    argv = logrx.apply_remediation(ARGV, items, env=env)
    assert argv == ARGV
    assert env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_nothing_applicable_changes_nothing(report):
    plan = logrx.plan_relaunch(ARGV, [])
    assert not plan.changed and plan.argv == ARGV and plan.env == {}
