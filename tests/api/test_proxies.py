"""Forwarding headers are ignored unless configured (docs/security.md): the
client address that the rate limit, the quotas and the stream caps key on is the peer's,
unless the peer is a proxy named in ``TRUSTED_PROXIES`` (off by default). The server is
built as ``make serve`` builds it (:func:`infra.serve.uvicorn_config`, uvicorn's own
proxy-headers middleware included), and driven with a spoofed ``X-Forwarded-For``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar

from infra.serve import uvicorn_config
from infra.settings import Settings, SettingsError
from tests.documents import load_yaml_all

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def spoofed(settings: Settings, peer: str, n: int = 6) -> Counter[int]:
    """``n`` requests from ``peer``, each claiming another address in X-Forwarded-For."""
    config = uvicorn_config(settings)
    config.load()
    app: Litestar = config.app  # type: ignore[assignment]
    transport = httpx.ASGITransport(app=config.loaded_app, client=(peer, 40000))
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        got = [
            await c.get("/v1/matches", headers={"X-Forwarded-For": f"10.9.0.{i}"}) for i in range(n)
        ]
    return Counter(r.status_code for r in got)


def limited(**more: Any) -> Settings:
    return Settings(backend="popo", rate_limit_per_minute=3, sweep_interval_ms=0, **more)


async def test_a_spoofed_forwarded_for_is_ignored_by_default() -> None:
    """The issue's second finding: uvicorn's defaults trusted 127.0.0.1's headers."""
    assert await spoofed(limited(), "127.0.0.1") == {200: 3, 429: 3}
    assert Settings().trusted_proxies == ()


async def test_it_is_honoured_only_from_a_trusted_proxy() -> None:
    trusted = limited(trusted_proxies=("127.0.0.1",))
    assert await spoofed(trusted, "127.0.0.1") == {200: 6}
    cidr = limited(trusted_proxies=("10.42.0.0/16",))
    assert await spoofed(cidr, "10.42.3.4") == {200: 6}
    assert await spoofed(cidr, "192.0.2.1") == {200: 3, 429: 3}  # not the proxy: ignored


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, ()),
        ({"TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1"}, ("10.0.0.0/8", "127.0.0.1")),
        ({"TRUSTED_PROXIES": "fd00::/8"}, ("fd00::/8",)),
        ({"FORWARDED_ALLOW_IPS": "10.1.2.3"}, ("10.1.2.3",)),  # uvicorn's name, still read
        ({"TRUSTED_PROXIES": "10.0.0.1", "FORWARDED_ALLOW_IPS": "10.1.2.3"}, ("10.0.0.1",)),
    ],
)
def test_the_setting(env: dict[str, str], expected: tuple[str, ...]) -> None:
    settings = Settings.from_env(env)
    assert settings.trusted_proxies == expected
    config = uvicorn_config(Settings(backend="popo", trusted_proxies=expected))
    assert config.proxy_headers is bool(expected)


@pytest.mark.parametrize("value", ["*", "localhost", "10.0.0.0/33", "1.2.3.4.5"])
def test_a_trusted_proxy_is_an_address_or_a_network(value: str) -> None:
    with pytest.raises(SettingsError, match="TRUSTED_PROXIES"):
        Settings.from_env({"TRUSTED_PROXIES": value})


def test_kubernetes_trusts_the_ingress_range_only() -> None:
    config = next(
        doc
        for doc in load_yaml_all((ROOT / "k8s" / "configmap.yaml").read_text())
        if doc["kind"] == "ConfigMap"
    )
    setting = {"TRUSTED_PROXIES": config["data"]["TRUSTED_PROXIES"]}
    proxies = Settings.from_env(setting).trusted_proxies
    assert proxies and all("/" in p and not p.endswith("/0") for p in proxies)
