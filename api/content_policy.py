"""What a browser may do with an answer (docs/security.md, docs/decisions.md D-doors): the
headers the edge (:mod:`api.edge`) adds to every answer by its media type.

* ``X-Content-Type-Options: nosniff`` on **every** answer: a browser takes the media type
  as said (a plain-text pairing sheet or a CSV is never run as a script or a page).
* A ``Content-Security-Policy`` on every **HTML** answer, never framed
  (``frame-ancestors 'none'``, and ``X-Frame-Options: DENY`` for older browsers): no page
  here is meant to be embedded — a venue screen opens the display page itself.

  - The director's pages (``api/tournaments/templates``) run their own inline script and
    style only, allowed by their sha256 (read from the templates here, once), and reach
    only this origin (the display page's ``EventSource``): ``default-src 'none'``. A
    script a name smuggled into a page would not run. So an inline script or style there
    holds no template expression (its hash would change with the page): :func:`page_hashes`
    refuses one, the page passes what it needs in ``data-`` attributes.
  - The documentation pages under ``/schema`` are Litestar's render plugins: their script
    and style come from the plugins' own addresses (``js_url``, ``css_url``), with the
    inline start-up that carries the OpenAPI document (``'unsafe-inline'``: the document
    is the service's, nobody writes into it).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from jinja2 import Environment

from api.openapi_config import pages
from api.tournaments.pages import TEMPLATES

NOSNIFF: Final = (b"x-content-type-options", b"nosniff")
NOT_FRAMED: Final = (b"x-frame-options", b"DENY")
DOCS_PATH: Final = "/schema"
"""Where the documentation pages are served (``OpenAPIConfig.path``'s default)."""
_INLINE = re.compile(r"<(script|style)>(.*?)</\1>", re.S)
_ALWAYS: Final = "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def page_hashes(env: Environment) -> dict[str, list[str]]:
    """The CSP sources (``'sha256-…'``) of every inline script and style of ``env``'s
    templates, by tag; ValueError for one holding a template expression."""
    found: dict[str, list[str]] = {"script": [], "style": []}
    assert env.loader is not None
    for name in env.list_templates():
        source, _, _ = env.loader.get_source(env, name)
        for tag, body in _INLINE.findall(source):
            if "{{" in body or "{%" in body:
                raise ValueError(f"{name}: an inline {tag} holds a template expression")
            digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
            found[tag].append(f"'sha256-{digest}'")
    return found


def _origins(urls: Iterable[str | None]) -> str:
    return " ".join(sorted({f"{p.scheme}://{p.netloc}" for u in urls if u for p in [urlsplit(u)]}))


def page_policy(env: Environment) -> str:
    """The director's pages' policy (the module docstring)."""
    hashes = page_hashes(env)
    return (
        f"default-src 'none'; script-src {' '.join(hashes['script'])}; "
        f"style-src {' '.join(hashes['style'])}; connect-src 'self'; img-src 'self'; {_ALWAYS}"
    )


def docs_policy() -> str:
    """The documentation pages' policy: each render plugin's script and style addresses."""
    plugins = pages()
    scripts = _origins(
        url
        for p in plugins
        for url in (getattr(p, "js_url", None), getattr(p, "standalone_preset_js_url", None))
    )
    styles = _origins(getattr(p, "css_url", None) for p in plugins)
    return (
        f"default-src 'self'; script-src 'self' 'unsafe-inline' {scripts}; "
        f"style-src 'self' 'unsafe-inline' {styles} https://fonts.googleapis.com; "
        "font-src 'self' data: https://fonts.gstatic.com; img-src 'self' data: https:; "
        f"worker-src 'self' blob:; connect-src 'self'; {_ALWAYS}"
    )


PAGE_POLICY: Final = page_policy(TEMPLATES).encode()
DOCS_POLICY: Final = docs_policy().encode()
_CSP: Final = b"content-security-policy"
_CONTENT_TYPE: Final = b"content-type"


def policy_headers(path: str, headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers an answer at ``path`` with ``headers`` gets besides them."""
    media = next((v for k, v in headers if k.lower() == _CONTENT_TYPE), b"").lower()
    added = [NOSNIFF]
    if media.startswith(b"text/html"):
        docs = path == DOCS_PATH or path.startswith(DOCS_PATH + "/")
        added += [(_CSP, DOCS_POLICY if docs else PAGE_POLICY), NOT_FRAMED]
    return added
