"""Responses compressed when the client asks (``Accept-Encoding: gzip``), by Litestar's
compression middleware (docs/decisions.md D-light-frames).

A JSON answer of 500 bytes or more is compressed whole; a stream (the live views, the
events feed, a player's or a tournament's stream) is compressed as it goes: each chunk the
handler yields — an SSE frame — is written and flushed (``Z_SYNC_FLUSH``) on its own, so
the frame reaches the client at once while the one gzip stream keeps its window across
frames (a frame much like the one before costs a few bytes). A route that encodes its body
itself says so with :data:`OWN_ENCODING` in its ``opt`` and is left alone.
"""

from __future__ import annotations

from litestar.config.compression import CompressionConfig

OWN_ENCODING = "own_encoding"
"""A route ``opt`` key: the route sets its own ``Content-Encoding`` (no compression on top)."""

COMPRESSION = CompressionConfig(backend="gzip", gzip_compress_level=6, exclude_opt_key=OWN_ENCODING)
"""``gzip`` at zlib's default level (level 9 costs more CPU for a few bytes per frame)."""
