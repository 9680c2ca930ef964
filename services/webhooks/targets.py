"""Where webhooks may be sent (docs/webhooks.md, docs/security.md).

A subscription's URL is chosen by whoever holds the operator token, and the delivery log
reports what answered there — so an unchecked URL would let it probe, and POST into, what
only the service can reach: loopback (the API itself, its database on 5432), link-local
(a cloud's metadata service at 169.254.169.254), private networks. :class:`TargetPolicy`
allows by default only ``https`` (``http`` when ``WEBHOOK_ALLOW_HTTP``) to *public*
addresses; ``WEBHOOK_PRIVATE_TARGETS`` lists the networks (CIDR) or host names that may be
private on purpose (a push gateway in the same cluster).

The check is made twice: when the subscription is registered (a literal address, or a
name that resolves now, that is not allowed is a 422) and **at every delivery**, where the
name is resolved again and the request is sent to the address just checked (the URL's
host stays the ``Host`` header and the TLS server name), so a name that later resolves to
loopback (DNS rebinding) is refused rather than followed. Redirects are never followed.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from domain.rules.errors import InvalidInputError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolve = Callable[[str, int], list[str]]
"""A host name and port → the addresses it resolves to (``getaddrinfo``)."""


class TargetRefusedError(InvalidInputError):
    """422: a webhook URL this service will not post to."""

    code = "webhook-target-refused"


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6), as text."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
"""The NAT64 well-known prefix (RFC 6052): the IPv4 address is the last 32 bits."""
LOCAL_NAT64: Final = ipaddress.IPv6Network("64:ff9b:1::/48")
"""The local-use NAT64 prefix (RFC 8215): the IPv4 address is bits 48–63 and 72–87."""
IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
"""IPv4-compatible addresses (RFC 4291, deprecated): the last 32 bits."""


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address reaches through a translator or a tunnel:
    IPv4-mapped and -compatible, NAT64 (both prefixes), 6to4 (2002::/16) and Teredo
    (2001::/32: its server and its client)."""
    packed = address.packed
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    if address in NAT64 or address in IPV4_COMPATIBLE:
        return (ipaddress.IPv4Address(packed[12:]),)
    if address in LOCAL_NAT64:
        return (ipaddress.IPv4Address(packed[6:8] + packed[9:11]),)
    return ()


def public(address: Address) -> bool:
    """A globally routable unicast address: not loopback, private, link-local, shared,
    reserved, multicast or unspecified. An IPv6 address that carries an IPv4 one (NAT64,
    6to4, Teredo, IPv4-mapped or -compatible: :func:`embedded_ipv4`) is public only if
    every IPv4 address it carries is; an IPv4-mapped or -compatible one is judged as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = embedded_ipv4(address)
        if not all(public(ipv4) for ipv4 in carried):
            return False
        if carried and (address.ipv4_mapped is not None or address in IPV4_COMPATIBLE):
            return True
    return address.is_global and not address.is_multicast


@dataclass(frozen=True, slots=True)
class Target:
    """A checked destination: the URL as registered and the address to connect to."""

    url: str
    host: str
    address: str


@dataclass(frozen=True)
class TargetPolicy:
    """The webhook destinations allowed (the module docstring)."""

    allow_http: bool = False
    private: tuple[str, ...] = ()
    """Networks (CIDR or one address) and host names that may be private."""
    resolver: Resolve = resolve
    _networks: tuple[Network, ...] = field(init=False, default=())
    _names: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        networks: list[Network] = []
        names: set[str] = set()
        for item in self.private:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                names.add(item.lower().rstrip("."))
        object.__setattr__(self, "_networks", tuple(networks))
        object.__setattr__(self, "_names", frozenset(names))

    def _parts(self, url: str) -> tuple[str, str, int]:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as e:
            raise TargetRefusedError(f"url: not a URL ({e})") from None
        schemes = ("https", "http") if self.allow_http else ("https",)
        if parts.scheme not in schemes:
            raise TargetRefusedError(
                f"url: {parts.scheme or '(no scheme)'}:// is not allowed: use https"
                + ("" if self.allow_http else " (http only with WEBHOOK_ALLOW_HTTP)")
            )
        host = (parts.hostname or "").lower().rstrip(".")
        if not host:
            raise TargetRefusedError("url: a host is needed")
        if parts.username or parts.password:
            raise TargetRefusedError("url: no user name or password in the URL")
        return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)

    def _allowed(self, host: str, address: str) -> bool:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if host in self._names or any(ip in net for net in self._networks):
            return True
        return public(ip)

    def check(self, url: str, must_resolve: bool) -> Target | None:
        """The target of ``url`` if every address it names is allowed; 422 otherwise. A
        name that does not resolve is refused when ``must_resolve`` (a delivery), else
        answers None (a registration: it is checked again at every delivery)."""
        _, host, port = self._parts(url)
        try:
            literal: Address | None = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            literal = None
        local = host in ("localhost", "localhost.localdomain") or host.endswith(".localhost")
        if literal is None and local and host not in self._names:
            raise TargetRefusedError(f"url: {host} is this machine: not a webhook target")
        try:
            addresses: Sequence[str] = (
                [str(literal)] if literal is not None else self.resolver(host, port)
            )
        except OSError as e:
            if must_resolve:
                raise TargetRefusedError(f"url: {host} does not resolve ({e})") from None
            return None
        refused = [a for a in addresses if not self._allowed(host, a)]
        if refused or not addresses:
            raise TargetRefusedError(
                f"url: {host} resolves to {', '.join(refused) or 'nothing'}, an internal "
                "address (loopback, private, link-local or reserved); allow it with "
                "WEBHOOK_PRIVATE_TARGETS"
            )
        return Target(url, host, addresses[0])

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """POST to ``url`` at the address just checked (Host and TLS name kept)."""
        target = self.check(url, True)
        assert target is not None
        parts = urlsplit(url)
        ip = ipaddress.ip_address(target.address.split("%", 1)[0])
        shown = f"[{ip}]" if ip.version == 6 else str(ip)
        netloc = shown + (f":{parts.port}" if parts.port else "")
        pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
        host_header = parts.hostname or target.host
        if parts.port:
            host_header += f":{parts.port}"
        import httpx  # noqa: PLC0415 - on first delivery (not in every process's start)

        with httpx.Client(timeout=5.0, follow_redirects=False, verify=tls_context()) as client:
            response = client.post(
                pinned,
                content=body,
                headers={**headers, "Host": host_header},
                extensions={"sni_hostname": target.host},
            )
            return response.status_code


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The deliveries' one TLS context, made on the first (httpx's default: the CA bundle,
    the environment's ``SSL_CERT_FILE``/``SSL_CERT_DIR``). Making one reads and parses the
    bundle, ~40 ms of CPU, against ~3 ms for a delivery's request; a context serves any
    number of connections and threads."""
    import httpx  # noqa: PLC0415 - on first delivery (not in every process's start)

    return httpx.create_ssl_context()


PUBLIC_HTTPS: Final = TargetPolicy()
"""The default: ``https`` to public addresses only."""
