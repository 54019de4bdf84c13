# SPDX-License-Identifier: MIT
from __future__ import annotations


class Error(Exception):
    """Anything logrx refuses: a broken rulebook, an unreadable log, bad options,
    a command the remediation cannot be applied to, a missing liblogrx."""
