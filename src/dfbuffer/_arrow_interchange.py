"""The DataFrame interchange protocol served over Arrow PyCapsule producers."""

from __future__ import annotations
