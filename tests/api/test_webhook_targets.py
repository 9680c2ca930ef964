"""Webhook destinations are checked (docs/webhooks.md, docs/security.md): only https (http
when WEBHOOK_ALLOW_HTTP) to public addresses, checked when registered and again at every
delivery, where the request goes to the address just checked (no DNS rebinding);
WEBHOOK_PRIVATE_TARGETS lets named internal networks through."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.webhooks.targets import TargetPolicy, TargetRefusedError
from tests.api.rest import auth, client, new_service

OPERATOR = "operator-token-0123456789abcdef"
SECRET = "a-webhook-secret-of-32-characters"

INTERNAL = [
    "https://127.0.0.1/hook",
    "https://127.0.0.1:5432/",
    "https://localhost/hook",
    "https://app.localhost/hook",
    "https://[::1]/hook",
    "https://0.0.0.0/hook",
    "https://2130706433/hook",  # 127.0.0.1 as one decimal number
    "https://0x7f000001/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://10.1.2.3/hook",
    "https://192.168.0.10/hook",
    "https://172.16.5.4/hook",
    "https://100.64.0.1/hook",  # shared address space
    "https://[::ffff:127.0.0.1]/hook",
    "https://[fe80::1]/hook",
    "https://[fd00::1]/hook",
    "https://224.0.0.1/hook",
    "http://push.example/hook",  # http without WEBHOOK_ALLOW_HTTP
    "ftp://push.example/hook",
    "https://user:pw@push.example/hook",
    "https://rebinds.example/hook",  # resolves to loopback
]


def fake_resolver(answers: dict[str, list[str]]) -> Any:
    def resolve(host: str, port: int) -> list[str]:
        if host in answers:
            return answers[host]
        from services.webhooks.targets import resolve as real  # noqa: PLC0415

        return real(host, port)  # numeric forms (decimal, hex): no network needed

    return resolve


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_targets_are_refused(url: str) -> None:
    policy = TargetPolicy(resolver=fake_resolver({"rebinds.example": ["127.0.0.1"]}))
    with pytest.raises(TargetRefusedError):
        policy.check(url, True)


EMBEDDED = [
    # (IPv6 literal, allowed): an address that carries an IPv4 one is judged by it too
    ("64:ff9b::7f00:1", False),  # NAT64 well-known prefix → 127.0.0.1
    ("64:ff9b::a01:203", False),  # NAT64 → 10.1.2.3
    ("64:ff9b::a9fe:a9fe", False),  # NAT64 → 169.254.169.254
    ("64:ff9b::808:808", True),  # NAT64 → 8.8.8.8
    ("64:ff9b:1:7f00:0:100::", False),  # local-use NAT64 /48 → 127.0.0.1
    ("64:ff9b:1:c0a8:0:101::", False),  # local-use NAT64 /48 → 192.168.1.1
    ("2002:7f00:1::", False),  # 6to4 → 127.0.0.1
    ("2002:a00:1::1", False),  # 6to4 → 10.0.0.1
    ("2002:c0a8:101::", False),  # 6to4 → 192.168.1.1
    ("2002:808:808::1", True),  # 6to4 → 8.8.8.8
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),  # Teredo, client 127.0.0.1
    ("2001:0:7f00:1::", False),  # Teredo, server 127.0.0.1
    ("::ffff:127.0.0.1", False),  # IPv4-mapped
    ("::ffff:a00:1", False),  # IPv4-mapped 10.0.0.1
    ("::ffff:808:808", True),  # IPv4-mapped 8.8.8.8
    ("::127.0.0.1", False),  # IPv4-compatible (deprecated)
    ("::a9fe:a9fe", False),  # IPv4-compatible 169.254.169.254
    ("::808:808", True),  # IPv4-compatible 8.8.8.8
    ("2606:4700::1111", True),  # plain public IPv6
]


@pytest.mark.parametrize(("address", "allowed"), EMBEDDED)
def test_ipv6_spellings_of_ipv4_addresses_are_judged_by_the_ipv4_address(
    address: str, allowed: bool
) -> None:
    """NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32) and
    IPv4-mapped/compatible addresses reach the IPv4 address inside them."""
    url = f"https://[{address}]/hook"
    if allowed:
        assert TargetPolicy().check(url, True) is not None
    else:
        with pytest.raises(TargetRefusedError):
            TargetPolicy().check(url, True)


def test_public_targets_and_allowed_private_ones_pass() -> None:
    policy = TargetPolicy(
        private=("10.0.0.0/8", "push.internal"),
        resolver=fake_resolver(
            {"push.example": ["93.184.216.34"], "push.internal": ["192.168.1.1"]}
        ),
    )
    assert policy.check("https://push.example/hook", True) is not None
    assert policy.check("https://10.1.2.3/hook", True) is not None
    assert policy.check("https://push.internal/hook", True) is not None
    with pytest.raises(TargetRefusedError):
        policy.check("https://192.168.0.10/hook", True)  # not listed
    assert TargetPolicy(allow_http=True).check("http://93.184.216.34/", True) is not None


def test_a_name_that_rebinds_to_loopback_is_refused_at_delivery() -> None:
    """Public when registered, loopback when delivered: the delivery is refused (and
    recorded as a failed attempt by the dispatcher), never sent to loopback."""
    answers = {"flip.example": ["93.184.216.34"]}
    policy = TargetPolicy(resolver=fake_resolver(answers))
    assert policy.check("https://flip.example/hook", False) is not None
    answers["flip.example"] = ["127.0.0.1"]
    with pytest.raises(TargetRefusedError):
        policy.post("https://flip.example/hook", b"{}", {})


def test_a_name_that_does_not_resolve_waits_for_the_delivery_check() -> None:
    def nowhere(host: str, port: int) -> list[str]:
        raise OSError("no such name")

    policy = TargetPolicy(resolver=nowhere)
    assert policy.check("https://push.example/hook", False) is None  # registration
    with pytest.raises(TargetRefusedError):
        policy.check("https://push.example/hook", True)  # delivery


@pytest.fixture
def receiver() -> Iterator[tuple[int, list[dict[str, str]]]]:
    got: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            got.append(dict(self.headers))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], got
    server.shutdown()
    server.server_close()


def test_a_delivery_goes_to_the_address_checked_with_its_host_kept(
    receiver: tuple[int, list[dict[str, str]]],
) -> None:
    port, got = receiver
    policy = TargetPolicy(
        allow_http=True,
        private=("127.0.0.1",),
        resolver=fake_resolver({"hooks.test": ["127.0.0.1"]}),
    )
    assert policy.post(f"http://hooks.test:{port}/in", b"{}", {"X-A": "1"}) == 204
    assert got[0]["Host"] == f"hooks.test:{port}" and got[0]["X-A"] == "1"


@pytest.fixture(scope="module")
def refusing() -> Iterator[TestClient[Litestar]]:
    """One app with an operator token and the default targets policy: its tests only have
    registrations refused, so it never holds a webhook whatever ran before."""
    with client(new_service(), operator_token=OPERATOR) as c:
        yield c


@pytest.mark.parametrize("url", [u for u in INTERNAL if "example" not in u])
def test_the_route_refuses_internal_urls_with_a_422(
    refusing: TestClient[Litestar], url: str
) -> None:
    """The finding: loopback, localhost, [::1], 0.0.0.0, decimal IPs, 169.254.169.254,
    10.x and port 5432 were accepted and POSTed to."""
    c = refusing
    body = {"url": url, "secret": SECRET, "kinds": ["your-turn"]}
    r = c.post("/v1/webhooks", json=body, headers=auth(OPERATOR))
    assert r.status_code == 422, r.text
    assert r.json()["code"] in ("webhook-target-refused", "invalid-input"), r.json()
    assert c.get("/v1/webhooks", headers=auth(OPERATOR)).json() == []


def test_the_private_targets_setting_lets_a_network_through() -> None:
    service = new_service()
    with client(service, operator_token=OPERATOR, webhook_private_targets=("10.0.0.0/8",)) as c:
        body = {"url": "https://10.1.2.3/hook", "secret": SECRET, "kinds": ["your-turn"]}
        assert c.post("/v1/webhooks", json=body, headers=auth(OPERATOR)).status_code == 201
