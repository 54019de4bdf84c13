# SPDX-License-Identifier: MIT
"""The report's values as dataclasses, read from the `scan --format json` document.

Field names follow that document (a public contract: it is extended, never
renamed); each object keeps the JSON it was read from in `raw`, so fields a
newer liblogrx adds are never lost.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

JSON = Dict[str, Any]


def _strings(value: Any) -> List[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(frozen=True)
class Remediation:
    """One flag, environment variable or model parameter to change.

    `applicable` is False for advice a person has to act on (the `why` says
    what to choose) and for items a supervisor must not put on a command line
    as they are; `apply_remediation` applies only applicable, primary items.
    """

    kind: str  # "flag", "env", "param" or "container" (docker run option)
    name: str  # "--mem-fraction-static", "PYTORCH_CUDA_ALLOC_CONF", "num_ctx"
    value: Optional[str]
    why: str = ""
    rule: str = ""
    alternative: bool = False  # part of an alternative fix, not the primary one
    applicable: bool = True
    note: str = ""  # a value clamped, rounded or refused by the flag's range
    conflicts: List[str] = field(default_factory=list)
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: JSON) -> "Remediation":
        kind = next((k for k in ("flag", "env", "param", "container") if k in data), "flag")
        value = data.get("value")
        return cls(
            kind=kind,
            name=str(data.get(kind, "")),
            value=None if value is None else str(value),
            why=str(data.get("why", "")),
            rule=str(data.get("rule", "")),
            alternative=bool(data.get("alternative", False)),
            applicable=bool(data.get("applicable", True)),
            note=str(data.get("note", "")),
            conflicts=_strings(data.get("conflicts")),
            raw=data,
        )

    def to_dict(self) -> JSON:
        return copy.deepcopy(self.raw)

    def __str__(self) -> str:
        if self.value is None:
            return self.name
        return f"{self.name}={self.value}" if self.kind == "env" else f"{self.name} {self.value}"


@dataclass(frozen=True)
class RootCause:
    """The finding a wrapper finding (a consequence) was caused by."""

    rule: str
    line: int


@dataclass(frozen=True)
class Evidence:
    line: int
    text: str


@dataclass(frozen=True)
class Finding:
    """A problem recognized in the log, with the fix the rule prescribes."""

    rule: str
    category: str
    severity: str  # "info", "warning", "error", "fatal"
    stale: bool  # the line comes from an earlier launch than the one asked about
    file: str
    line: int
    title: str
    message: str
    remediation: List[Remediation]
    root_cause: Optional[RootCause]
    end_line: int = 0
    run: int = 0
    server: str = ""
    tier: str = ""
    phase: str = ""
    count: int = 1
    wrapper: bool = False
    explanation: str = ""
    captures: Dict[str, str] = field(default_factory=dict)
    references: List[str] = field(default_factory=list)
    evidence: List[Evidence] = field(default_factory=list)
    exception: str = ""
    root_exception: str = ""
    timestamp: str = ""
    #: ISO 8601, with the year inferred when the line printed none.
    timestamp_iso: str = ""
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: JSON) -> "Finding":
        cause = data.get("root_cause")
        return cls(
            rule=str(data.get("rule", "")),
            category=str(data.get("category", "")),
            severity=str(data.get("severity", "")),
            stale=bool(data.get("stale", False)),
            file=str(data.get("file", "")),
            line=int(data.get("line", 0)),
            title=str(data.get("title", "")),
            message=str(data.get("message", "")),
            remediation=[Remediation.from_dict(r) for r in data.get("remediation", [])],
            root_cause=RootCause(str(cause.get("rule", "")), int(cause.get("line", 0)))
            if isinstance(cause, dict)
            else None,
            end_line=int(data.get("end_line", 0)),
            run=int(data.get("run", 0)),
            server=str(data.get("server", "")),
            tier=str(data.get("tier", "")),
            phase=str(data.get("phase", "")),
            count=int(data.get("count", 1)),
            wrapper=bool(data.get("wrapper", False)),
            explanation=str(data.get("explanation", "")),
            captures={str(k): str(v) for k, v in data.get("captures", {}).items()},
            references=_strings(data.get("references")),
            evidence=[Evidence(int(e.get("line", 0)), str(e.get("text", "")))
                      for e in data.get("evidence", [])],
            exception=str(data.get("exception", "")),
            root_exception=str(data.get("root_exception", "")),
            timestamp=str(data.get("timestamp", "")),
            timestamp_iso=str(data.get("timestamp_iso", "")),
            raw=data,
        )

    def to_dict(self) -> JSON:
        return copy.deepcopy(self.raw)


@dataclass(frozen=True)
class Summary:
    lines: int
    findings: int
    worst_severity: Optional[str]  # None when there is no finding
    by_category: Dict[str, int]
    by_severity: Dict[str, int]
    findings_dropped: int = 0
    truncated_lines: int = 0
    runs: int = 0
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: JSON) -> "Summary":
        worst = data.get("worst_severity")
        return cls(
            lines=int(data.get("lines", 0)),
            findings=int(data.get("findings", 0)),
            worst_severity=None if worst in (None, "none") else str(worst),
            by_category=dict(data.get("by_category", {})),
            by_severity=dict(data.get("by_severity", {})),
            findings_dropped=int(data.get("findings_dropped", 0)),
            truncated_lines=int(data.get("truncated_lines", 0)),
            runs=int(data.get("runs", 0)),
            raw=data,
        )


@dataclass(frozen=True)
class Run:
    """One launch of the server in the log, with the facts read from it."""

    run: int
    first_line: int
    last_line: int
    server: str
    phase: str
    reached_ready: bool
    facts: Dict[str, Any]
    first_timestamp: str = ""
    last_timestamp: str = ""
    first_timestamp_iso: str = ""
    last_timestamp_iso: str = ""
    file: str = ""  # the input the launch was read from

    @classmethod
    def from_dict(cls, data: JSON) -> "Run":
        return cls(
            run=int(data.get("run", 0)),
            first_line=int(data.get("first_line", 0)),
            last_line=int(data.get("last_line", 0)),
            server=str(data.get("server", "")),
            phase=str(data.get("phase", "")),
            reached_ready=bool(data.get("reached_ready", False)),
            facts=dict(data.get("facts", {})),
            first_timestamp=str(data.get("first_timestamp", "")),
            last_timestamp=str(data.get("last_timestamp", "")),
            first_timestamp_iso=str(data.get("first_timestamp_iso", "")),
            last_timestamp_iso=str(data.get("last_timestamp_iso", "")),
            file=str(data.get("file", "")),
        )


@dataclass(frozen=True)
class Report:
    """What a whole log says: findings, the merged remediation, a summary and the launches."""

    findings: List[Finding]
    remediation: List[Remediation]  # merged over the findings of the latest launch
    summary: Summary
    runs: List[Run]
    diagnostics: List[JSON]
    #: Each input's own merged remediation, in input order.
    remediation_by_file: Dict[str, List[Remediation]] = field(default_factory=dict)
    #: Why the input could not be read to its end (corrupt or truncated compressed data); "" when read.
    input_error: str = ""
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: JSON) -> "Report":
        return cls(
            findings=[Finding.from_dict(f) for f in data.get("findings", [])],
            remediation=[Remediation.from_dict(r) for r in data.get("remediation", [])],
            summary=Summary.from_dict(data.get("summary", {})),
            runs=[Run.from_dict(r) for r in data.get("runs", [])],
            diagnostics=list(data.get("diagnostics", [])),
            remediation_by_file={str(name): [Remediation.from_dict(r) for r in items]
                                 for name, items in data.get("remediation_by_file", {}).items()},
            input_error=str(data.get("input_error", "")),
            raw=data,
        )

    def to_dict(self) -> JSON:
        """The `logrx scan --format json` document."""
        return copy.deepcopy(self.raw)

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.raw, indent=indent, ensure_ascii=False)


@dataclass(frozen=True)
class BudgetPart:
    name: str  # "weights", "KV cache", "CUDA graphs", ...
    gb: Optional[float]  # per GPU; None when the log did not say
    detail: str = ""
    unit: str = "GB"  # as the log printed it: vLLM "GiB", SGLang "GB" (both 2**30 bytes)


@dataclass(frozen=True)
class Budget:
    """The GPU memory budget of the latest launch (`logrx budget --format json`)."""

    run: int
    server: str
    total_gb: Optional[float]
    total_estimated: bool
    fraction_name: str
    fraction: Optional[float]
    parts: List[BudgetPart]
    free_gb: Optional[float]
    arithmetic: List[str]
    missing: List[str]
    rejected: List[str]
    remediation: List[Remediation]
    unit: str = "GB"  # of total_gb, free_gb and the arithmetic, as the log printed its sizes
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: JSON) -> "Budget":
        def number(value: Any) -> Optional[float]:
            return None if value is None else float(value)

        return cls(
            run=int(data.get("run", 0)),
            server=str(data.get("server", "")),
            total_gb=number(data.get("total_gb")),
            total_estimated=bool(data.get("total_estimated", False)),
            fraction_name=str(data.get("fraction_name", "")),
            fraction=number(data.get("fraction")),
            parts=[BudgetPart(str(p.get("name", "")), number(p.get("gb")), str(p.get("detail", "")),
                              str(p.get("unit", "GB")))
                   for p in data.get("parts", [])],
            free_gb=number(data.get("free_gb")),
            arithmetic=_strings(data.get("arithmetic")),
            missing=_strings(data.get("missing")),
            rejected=_strings(data.get("rejected")),
            remediation=[Remediation.from_dict(r) for r in data.get("remediation", [])],
            unit=str(data.get("unit", "GB")),
            raw=data,
        )

    def to_dict(self) -> JSON:
        return copy.deepcopy(self.raw)


@dataclass(frozen=True)
class Rule:
    """A rule of a loaded rulebook (`logrx rules list --format json`)."""

    id: str
    severity: str
    category: str
    servers: List[str]
    title: str
    file: str  # "builtin:rules/sglang/memory.json" for the copy compiled into liblogrx

    @classmethod
    def from_dict(cls, data: JSON) -> "Rule":
        return cls(str(data.get("id", "")), str(data.get("severity", "")),
                   str(data.get("category", "")), _strings(data.get("servers")),
                   str(data.get("title", "")), str(data.get("file", "")))


@dataclass(frozen=True)
class Relaunch:
    """A launch command with remediation applied (see `plan_relaunch`)."""

    argv: List[str]
    env: Dict[str, str]  # variables to set on top of the inherited environment
    changed: bool
    applied: List[str]  # "--mem-fraction-static 0.85 (was 0.8)", "VAR=value"
    skipped: List[str]  # "--flag (why not)"
    command_line: str  # the command as one shell line
