# SPDX-License-Identifier: MIT
"""Rulebook, Analyzer and the one-call helpers over the C API."""
from __future__ import annotations

import ctypes
import json
import os
import threading
import time
from typing import (IO, Any, Callable, Dict, Iterable, List, Mapping, MutableMapping, Optional,
                    Sequence, Union)

from . import _native
from ._errors import Error
from ._types import Budget, Finding, Relaunch, Remediation, Report, Rule

PathLike = Union[str, "os.PathLike[str]"]
RulesArg = Union[None, "Rulebook", PathLike, Sequence[PathLike]]

_CHUNK = 1 << 18
_FILE_PIECE = 4 << 20


def version() -> str:
    """The version of the loaded liblogrx ("0.1.0")."""
    return _native.lib().logrx_version().decode()


def builtin_rules_source() -> str:
    """Where the built-in rulebook is loaded from: $LOGRX_BUILTIN_RULES, the rules
    installed next to liblogrx (<libdir>/../share/logrx/rules), or "builtin:rules",
    the copy compiled into the library."""
    return _native.take_string(_native.lib().logrx_builtin_rules_source()) or ""


def _error_text(pointer: ctypes.c_void_p, fallback: str) -> str:
    return (_native.take_string(pointer.value) or fallback).strip()


class Rulebook:
    """A compiled, immutable rulebook, shared by any number of analyzers and threads.

    Loading compiles every rule (a few hundred milliseconds): load once, reuse.
    """

    _default: Optional["Rulebook"] = None
    _default_lock = threading.Lock()

    def __init__(self, _handle: int) -> None:
        self._handle: Optional[int] = _handle

    @classmethod
    def load(cls, dirs: Iterable[PathLike] = (), *, builtin: bool = True) -> "Rulebook":
        """Loads the built-in rulebook (unless `builtin=False`), then every
        directory or .json file in `dirs` in order; a later rule with the same id
        replaces an earlier one. Raises Error with every diagnostic on any problem."""
        paths = [os.fspath(d) for d in ([dirs] if isinstance(dirs, (str, os.PathLike)) else dirs)]
        error = ctypes.c_void_p()
        handle = _native.lib().logrx_rulebook_load(
            _native.strings(paths), len(paths), 1 if builtin else 0, ctypes.byref(error))
        if not handle:
            raise Error(_error_text(error, "the rulebook did not load"))
        return cls(handle)

    @classmethod
    def default(cls) -> "Rulebook":
        """The built-in rulebook, loaded once per process."""
        with cls._default_lock:
            if cls._default is None:
                cls._default = cls.load()
            return cls._default

    def _pointer(self) -> int:
        if self._handle is None:
            raise Error("the rulebook was closed")
        return self._handle

    def __len__(self) -> int:
        return int(_native.lib().logrx_rulebook_size(self._pointer()))

    @property
    def rules(self) -> List[Rule]:
        """The rules, ordered by id."""
        text = _native.take_string(_native.lib().logrx_rulebook_rules(self._pointer()))
        if text is None:
            raise Error("cannot list the rules")
        return [Rule.from_dict(r) for r in json.loads(text)]

    def close(self) -> None:
        """Releases the rulebook (analyzers created from it keep their own reference)."""
        if self._handle is not None and _native._lib is not None:
            _native.lib().logrx_rulebook_free(self._handle)
        self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self) -> str:
        return f"<logrx.Rulebook {len(self) if self._handle else 'closed'} rules>"


def _rulebook(rules: RulesArg) -> Rulebook:
    if rules is None:
        return Rulebook.default()
    if isinstance(rules, Rulebook):
        return rules
    return Rulebook.load([rules] if isinstance(rules, (str, os.PathLike)) else rules)


FindingCallback = Callable[[Finding], Any]


class Analyzer:
    """Reads one log stream as it comes and reports findings as soon as they are known.

        with logrx.Analyzer(name="server.log", on_finding=print) as analyzer:
            for chunk in stream:
                analyzer.feed(chunk)
        report = analyzer.report

    One analyzer per stream; use it from one thread at a time. Many analyzers
    may share a Rulebook. `on_finding` runs inside feed()/poll()/finish(); an
    exception it raises is re-raised from that call.
    """

    def __init__(self, rulebook: RulesArg = None, *, name: str = "<stream>",
                 launch_cmd: Optional[str] = None, since: Optional[str] = None,
                 server: Optional[str] = None, redact: bool = True,
                 file_mtime: Optional[int] = None, quiet_period: float = 2.0,
                 on_finding: Optional[FindingCallback] = None,
                 year: Optional[int] = None) -> None:
        """`rulebook` is a Rulebook, rule directories to load on top of the built-in
        rules, or None for the built-in ones. `launch_cmd` and `since` (ISO 8601)
        describe the launch you believe wrote the stream: lines that contradict
        them become stale findings. `server` ("vllm", "sglang", ...) names the
        server when the lines do not. `year` is that of timestamps printed
        without one (Finding.timestamp_iso); None infers it. `quiet_period`:
        see poll()."""
        self._book = _rulebook(rulebook)
        options: Dict[str, Any] = {"stream_name": name, "redact": bool(redact)}
        if launch_cmd:
            options["launch_command"] = launch_cmd
        if since:
            options["since"] = since
        if server:
            options["server"] = server
        if file_mtime is not None:
            options["file_mtime"] = int(file_mtime)
        if year is not None:
            options["year"] = int(year)
        error = ctypes.c_void_p()
        handle = _native.lib().logrx_analyzer_new_with_options(
            self._book._pointer(), json.dumps(options).encode(), ctypes.byref(error))
        if not handle:
            raise Error(_error_text(error, "cannot create an analyzer"))
        self._handle: Optional[int] = handle
        self.on_finding = on_finding
        self.quiet_period = float(quiet_period)
        self._last_feed = time.monotonic()
        self._new: List[Finding] = []
        self._failure: Optional[BaseException] = None
        self._report: Optional[Report] = None
        # Kept on the object: the C side holds only the raw pointer.
        self._callback = _native.FINDING_CALLBACK(self._on_finding_json)
        _native.lib().logrx_analyzer_set_callback(handle, self._callback, None)

    def _on_finding_json(self, text: bytes, _user: Any) -> None:
        try:
            finding = Finding.from_dict(json.loads(text.decode("utf-8", "replace")))
            self._new.append(finding)
            if self.on_finding is not None and self._failure is None:
                self.on_finding(finding)
        except BaseException as e:  # noqa: B902 - must not unwind through C
            if self._failure is None:
                self._failure = e

    def _pointer(self) -> int:
        if self._handle is None:
            raise Error("the analyzer was closed")
        return self._handle

    def _collect(self) -> List[Finding]:
        new, self._new = self._new, []
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure
        return new

    def feed_all(self, data: Union[bytes, bytearray, memoryview, str], threads: int = 0) -> List[Finding]:
        """feed() for a large piece of a file: the stateless work on it runs on
        `threads` threads (0: the cores available) ahead of the in-order
        analysis; the report is the one feed() gives."""
        if threads < 0:
            raise ValueError("threads must be 0 or more")
        if not _native.has("logrx_analyzer_feed_all"):
            return self.feed(data)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        chunk = bytes(data)
        if _native.lib().logrx_analyzer_feed_all(self._pointer(), chunk, len(chunk), threads) != 0:
            raise Error("the analyzer is finished")
        self._last_feed = time.monotonic()
        return self._collect()

    def feed(self, data: Union[bytes, bytearray, memoryview, str]) -> List[Finding]:
        """Feeds bytes (lines may span calls) or text. Returns the findings this
        call completed (also passed to on_finding)."""
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        chunk = bytes(data)
        if _native.lib().logrx_analyzer_feed(self._pointer(), chunk, len(chunk)) != 0:
            raise Error("the analyzer is finished")
        self._last_feed = time.monotonic()
        return self._collect()

    def poll(self, now: Optional[float] = None) -> List[Finding]:
        """For a stream that went quiet (a hung server): when nothing was fed for
        `quiet_period` seconds before `now` (time.monotonic(); default: the
        current time), closes a multi-line event still waiting for lines (a
        traceback) and returns the findings held for it. Call it periodically
        from a supervisor's loop. Needs a liblogrx with logrx_analyzer_flush_idle."""
        lib = _native.lib()
        if not hasattr(lib, "logrx_analyzer_flush_idle"):
            raise Error("this liblogrx has no logrx_analyzer_flush_idle (poll)")
        pointer = self._pointer()
        current = time.monotonic() if now is None else float(now)
        if current - self._last_feed < self.quiet_period:
            return []
        if lib.logrx_analyzer_flush_idle(pointer) != 0:
            raise Error("the analyzer is finished")
        return self._collect()

    def note_exit(self) -> None:
        """Tells the analyzer the process writing the stream has ended, so a
        launch that never became ready is known to have died."""
        if _native.lib().logrx_analyzer_note_exit(self._pointer()) != 0:
            raise Error("the analyzer is finished")

    def finish(self) -> Report:
        """Ends the stream and returns the report (the same one on later calls)."""
        if self._report is None:
            text = _native.take_string(_native.lib().logrx_analyzer_finish(self._pointer()))
            if text is None:
                raise Error("the analyzer failed to produce a report")
            self._collect()
            self._report = Report.from_dict(json.loads(text))
        return self._report

    @property
    def report(self) -> Optional[Report]:
        """The report once finish() was called (the context manager calls it)."""
        return self._report

    def budget(self) -> Budget:
        """The GPU memory budget of the latest launch; finishes the stream first.
        Raises Error when the log has no launch or the launch printed no memory figure."""
        self.finish()
        text = _native.take_string(_native.lib().logrx_analyzer_budget(self._pointer()))
        if text is None:
            raise Error("the log has no launch to budget")
        result = Budget.from_dict(json.loads(text))
        # As `logrx budget`: a launch that printed no memory figure is nothing to budget.
        if (result.total_gb is None and result.fraction is None and result.free_gb is None
                and all(p.gb is None for p in result.parts)):
            raise Error("the log has no launch with memory figures to budget")
        return result

    def close(self) -> None:
        if self._handle is not None and _native._lib is not None:
            _native.lib().logrx_analyzer_free(self._handle)
        self._handle = None

    def __enter__(self) -> "Analyzer":
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        try:
            if kind is None:
                self.finish()
        finally:
            self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _feed_source(analyzer: Analyzer, source: Union[PathLike, IO[Any]], threads: int = 0) -> None:
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as stream:
                # A file in large pieces, scanned on `threads` threads (1: one pass).
                if threads != 1:
                    while chunk := stream.read(_FILE_PIECE):
                        analyzer.feed_all(chunk, threads)
                    return
                while chunk := stream.read(_CHUNK):
                    analyzer.feed(chunk)
        except OSError as e:
            raise Error(f"{os.fspath(source)}: {e.strerror or e}") from e
        return
    while chunk := source.read(_CHUNK):
        analyzer.feed(chunk)


def _stream_options(source: Union[PathLike, IO[Any]]) -> Dict[str, Any]:
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            mtime: Optional[int] = int(os.stat(path).st_mtime)
        except OSError:
            mtime = None
        return {"name": path, "file_mtime": mtime}
    name = getattr(source, "name", None)
    return {"name": name if isinstance(name, str) else "<stream>"}


def scan(path_or_file: Union[PathLike, IO[Any]], *, rules: RulesArg = None,
         launch_cmd: Optional[str] = None, since: Optional[str] = None,
         server: Optional[str] = None, redact: bool = True, threads: int = 0) -> Report:
    """Scans a whole log (a path, or a binary or text file object) like
    `logrx scan --format json` and returns its Report.

    `rules`: a Rulebook, or rule directories loaded on top of the built-in ones.
    `launch_cmd`, `since`: the launch you believe wrote the log (stale-output checks).
    `threads`: for a path, how many threads scan it (0: the cores available;
    the report is the same for any number)."""
    with Analyzer(rules, launch_cmd=launch_cmd, since=since, server=server, redact=redact,
                  **_stream_options(path_or_file)) as analyzer:
        _feed_source(analyzer, path_or_file, threads)
        return analyzer.finish()


def budget(path_or_file: Union[PathLike, IO[Any]], *, rules: RulesArg = None,
           server: Optional[str] = None) -> Budget:
    """The GPU memory budget of the log's latest launch (`logrx budget --format json`).
    Raises Error when the log has no launch with memory figures."""
    with Analyzer(rules, server=server, **_stream_options(path_or_file)) as analyzer:
        _feed_source(analyzer, path_or_file)
        return analyzer.budget()


def _remediation_json(report_or_findings: Union[Report, Iterable[Union[Finding, Remediation]]]) -> str:
    if isinstance(report_or_findings, Report):
        return json.dumps([r.raw for r in report_or_findings.remediation])
    items: List[Dict[str, Any]] = []
    for entry in report_or_findings:
        if isinstance(entry, Finding):
            items.extend(r.raw for r in entry.remediation)
        elif isinstance(entry, Remediation):
            items.append(entry.raw)
        else:
            raise TypeError(f"expected a Report, Findings or Remediation items, not {type(entry).__name__}")
    return json.dumps(items)


def plan_relaunch(argv: Sequence[str], report_or_findings: Union[Report, Iterable[Union[Finding, Remediation]]],
                  *, server: Optional[str] = None, rules: RulesArg = None) -> Relaunch:
    """Applies remediation to a launch command with the same rules as
    `logrx run --apply-remediation`: only applicable, primary items whose flag
    the server's flag list knows, each checked against the flag's arity, type
    and range; a value replaced in place, a flag appended, a variable set.
    `server` ("sglang", ...) defaults to the one argv starts. Raises Error when
    the command cannot be rewritten (a shell script with more than plain words)."""
    lib = _native.lib()
    if not hasattr(lib, "logrx_apply_remediation"):
        raise Error("this liblogrx has no logrx_apply_remediation")
    words = [str(a) for a in argv]
    if not words:
        raise Error("an empty command")
    book = _rulebook(rules)
    error = ctypes.c_void_p()
    text = _native.take_string(lib.logrx_apply_remediation(
        book._pointer(), server.encode() if server else None,
        _remediation_json(report_or_findings).encode(), _native.strings(words), len(words),
        ctypes.byref(error)))
    if text is None:
        raise Error(_error_text(error, "the remediation could not be applied"))
    data = json.loads(text)
    return Relaunch(argv=[str(a) for a in data.get("argv", [])],
                    env={str(k): str(v) for k, v in data.get("env", {}).items()},
                    changed=bool(data.get("changed", False)),
                    applied=[str(a) for a in data.get("applied", [])],
                    skipped=[str(a) for a in data.get("skipped", [])],
                    command_line=str(data.get("command_line", "")))


def apply_remediation(argv: Sequence[str],
                      report_or_findings: Union[Report, Iterable[Union[Finding, Remediation]]],
                      *, server: Optional[str] = None, env: Optional[MutableMapping[str, str]] = None,
                      rules: RulesArg = None) -> List[str]:
    """The new argv with the remediation applied (see plan_relaunch for the
    rules). The environment variables it sets are written into `env` when one is
    given (os.environ.copy() for subprocess.run(argv, env=env)); plan_relaunch
    returns them as a dict."""
    plan = plan_relaunch(argv, report_or_findings, server=server, rules=rules)
    if env is not None:
        env.update(plan.env)
    return plan.argv


def remediation_env(argv: Sequence[str],
                    report_or_findings: Union[Report, Iterable[Union[Finding, Remediation]]],
                    *, server: Optional[str] = None, rules: RulesArg = None) -> Mapping[str, str]:
    """The environment variables apply_remediation would set for this command."""
    return plan_relaunch(argv, report_or_findings, server=server, rules=rules).env
