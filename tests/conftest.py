"""Shared test fixtures: where the read-only reference data in ../shared lives."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
