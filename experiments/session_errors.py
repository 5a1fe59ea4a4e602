"""The session errors, in a module of their own so that the writer and its lock can both raise them."""
from __future__ import annotations


class SessionError(RuntimeError):
    """A session cannot be created, resumed or written; the message names the file."""


class SessionExistsError(SessionError):
    pass
