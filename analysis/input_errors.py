"""InputError: an argument of an analysis API function that the CLI would refuse (exit 2); the message names it.

Its own module so that the API (analysis/api.py, which re-exports it) and the modules it calls
(analysis/power/settings.py) share one class without importing each other."""
from __future__ import annotations


class InputError(ValueError):
    """An argument of an API function that the CLI would refuse; the message names it."""
