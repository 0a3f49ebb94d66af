"""The one check a server URL gets before any request is made with it, and whether a failed
connection was refused by this very machine."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["check_base_url", "refused_on_loopback"]


def check_base_url(url: str, *, example: str = "http://localhost:8000/v1") -> str:
    """``url`` if it is an absolute http(s) URL with a host; ``ValueError`` saying how to write it
    otherwise. A malformed URL is a mistake to fix, never a network failure to retry."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError as exc:
        raise ValueError(f"base URL {url!r} is not a valid URL ({exc}); write it like {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"base URL {url!r} is not an http:// or https:// URL with a host; write it like {example}"
        )
    return url


def refused_on_loopback(url: str, error: BaseException) -> bool:
    """Whether ``error`` (or an exception it was raised from) is a refused connection to ``url`` on
    this machine (localhost, 127.0.0.0/8, ::1): then no server listens there, and retrying cannot
    help (a remote host refusing may be restarting behind a balancer; this one is simply not up)."""
    host = urlsplit(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
    return loopback and _refused(error, set())


def _refused(error: BaseException, seen: set[int]) -> bool:
    """A ConnectionRefusedError in ``error``'s chain, or in a group of attempts (trio tries every
    address and raises them together)."""
    if id(error) in seen:
        return False
    seen.add(id(error))
    if isinstance(error, ConnectionRefusedError):
        return True
    if isinstance(error, BaseExceptionGroup) and any(_refused(e, seen) for e in error.exceptions):
        return True
    following = error.__cause__ or error.__context__
    return following is not None and _refused(following, seen)
