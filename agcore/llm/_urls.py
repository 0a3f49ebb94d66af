"""The one check a server URL gets before any request is made with it."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["check_base_url"]


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
