"""Reading an image file for an ``ImageBlock``: its media type from its bytes, a size cap, base64.

The media type comes from the file's signature, not its name: a ``.png`` that is really a JPEG is
sent as ``image/jpeg``, which is what the vendors check. Only the formats every vendor takes are
accepted (PNG, JPEG, GIF, WebP); anything else is refused before a request is spent on it.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

__all__ = ["IMAGE_MEDIA_TYPES", "MAX_IMAGE_BYTES", "ImageFileError", "read_image"]

#: The largest image file read by default: Anthropic's per-image limit, the strictest vendor's.
MAX_IMAGE_BYTES = 5 * 1024 * 1024

#: The formats accepted, by media type.
IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")

_SNIFF_BYTES = 12


class ImageFileError(ValueError):
    """An image file that cannot be sent: missing, unreadable, too large or not an image."""


def read_image(path: str | os.PathLike[str], *, max_bytes: int = MAX_IMAGE_BYTES) -> tuple[str, str]:
    """``(media_type, base64 data)`` of the image at ``path``; ``ImageFileError`` saying what to do
    when it is missing, over ``max_bytes``, or not a PNG, JPEG, GIF or WebP file."""
    file = Path(path).expanduser()
    try:
        size = file.stat().st_size
        if not file.is_file():
            raise ImageFileError(f"image {file}: not a file; give the path of an image file")
        if size > max_bytes:
            raise ImageFileError(
                f"image {file} is {size / 1_048_576:.1f} MB, over the {max_bytes / 1_048_576:.1f} MB "
                "limit: scale it down or compress it (e.g. to a JPEG under 2000 px on its longest side)"
            )
        data = file.read_bytes()
    except FileNotFoundError:
        raise ImageFileError(f"image {file}: no such file") from None
    except OSError as exc:
        raise ImageFileError(f"image {file}: cannot read it ({exc.strerror or exc})") from None
    media_type = sniff_media_type(data[:_SNIFF_BYTES])
    if media_type is None:
        raise ImageFileError(
            f"image {file}: not a PNG, JPEG, GIF or WebP file (the formats every vendor accepts); "
            "convert it to one of them"
        )
    return media_type, base64.b64encode(data).decode("ascii")


def sniff_media_type(head: bytes) -> str | None:
    """The media type the first bytes of an image file show, or None for another format."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None
