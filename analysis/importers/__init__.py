"""The error of the released-data importers that live with their studies (studies/<study>/importers/).

The importers themselves, of every format `twinlab import` reads (other tools' files, the browser sessions, a
study's released data), are found through one registry behind one contract: participants/imports/registry.py
(a study declares its formats as `IMPORTERS` in its package; the registry finds them there).
"""
from __future__ import annotations


class ImportDataError(ValueError):
    """Input that cannot be imported; the message names the file and, where it can, the line."""
