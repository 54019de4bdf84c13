# SPDX-License-Identifier: MIT
"""logrx: diagnose LLM inference server logs from Python.

    import logrx
    report = logrx.scan("server.log")
    for finding in report.findings:
        print(finding.severity, finding.rule, finding.title)
    argv = logrx.apply_remediation(sys.argv[1:], report)

A ctypes layer over liblogrx's C API (include/logrx/logrx.h): the analysis is
the same code as the `logrx` program, with the built-in rulebook compiled in.
See docs/python.md.
"""
from ._api import (Analyzer, Rulebook, apply_remediation, budget, builtin_rules_source,
                   plan_relaunch, remediation_env, scan, version)
from ._errors import Error
from ._types import (Budget, BudgetPart, Evidence, Finding, Relaunch, Remediation, Report,
                     RootCause, Rule, Run, Summary)

try:
    from ._config import VERSION as __version__
except ImportError:  # a bare source checkout: the library says
    __version__ = "unknown"

__all__ = [
    "Analyzer", "Budget", "BudgetPart", "Error", "Evidence", "Finding", "Relaunch", "Remediation",
    "Report", "RootCause", "Rule", "Rulebook", "Run", "Summary", "apply_remediation", "budget",
    "builtin_rules_source", "plan_relaunch", "remediation_env", "scan", "version",
]
