# SPDX-License-Identifier: MIT
"""Rulebook.load, the built-in rulebook, budget and remediation."""
import pathlib

import pytest

import logrx

NOT_ENOUGH = "sglang/scenario1-not-enough-memory.log"


def test_builtin_rulebook_is_compiled_in():
    # The package in build/python has no rules on disk next to its library.
    assert logrx.builtin_rules_source() == "builtin:rules"
    book = logrx.Rulebook.default()
    assert len(book) > 500
    rules = {r.id: r for r in book.rules}
    memory = rules["sglang.memory.not-enough-memory"]
    assert memory.file == "builtin:rules/sglang/memory.json"
    assert memory.severity == "fatal" and "sglang" in memory.servers


def test_user_rules_replace_and_add(data, tmp_path):
    book = logrx.Rulebook.load([data / "user_rules"])
    rules = {r.id: r for r in book.rules}
    assert rules["sglang.memory.not-enough-memory"].title.startswith("Site override")
    assert "site.disk.full" in rules
    log = tmp_path / "user.log"
    log.write_text("OSError: [Errno 28] No space left on device\n")
    assert any(f.rule == "site.disk.full" for f in logrx.scan(log, rules=book).findings)
    # A directory alone (not a Rulebook) is loaded on top of the built-in rules too.
    assert any(f.rule == "site.disk.full" for f in logrx.scan(log, rules=data / "user_rules").findings)
    only = logrx.Rulebook.load([data / "user_rules"], builtin=False)
    assert len(only) == 2


def test_broken_rules_raise_with_every_diagnostic(data):
    with pytest.raises(logrx.Error) as info:
        logrx.Rulebook.load([data / "bad_rules"], builtin=False)
    message = str(info.value)
    assert "syntax.json" in message and "memory.json" in message


def test_budget(corpus):
    budget = logrx.budget(corpus / NOT_ENOUGH)
    assert isinstance(budget, logrx.Budget)
    parts = {p.name: p.gb for p in budget.parts}
    assert parts["weights"] == pytest.approx(51.16)
    assert budget.fraction_name == "mem_fraction_static" and budget.fraction == pytest.approx(0.8)
    assert budget.to_dict()["parts"][0]["name"] == "weights"


def test_budget_of_a_log_without_a_launch(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    with pytest.raises(logrx.Error, match="no launch"):
        logrx.budget(empty)


def test_package_is_typed():
    assert (pathlib.Path(logrx.__file__).parent / "py.typed").exists()
    assert logrx.version() == logrx.__version__
