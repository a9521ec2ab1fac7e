"""Conformance checks for interchange-protocol producers (issue 5)."""

from __future__ import annotations
