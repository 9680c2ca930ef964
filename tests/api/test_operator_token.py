"""One operator: ``OPERATOR_TOKEN`` is one setting
(``Settings.operator_token``), at least 24 characters, and the same token opens the
unredacted events feed and the webhooks' routes."""

from __future__ import annotations

import pytest
from litestar.testing import TestClient

from infra.settings import OPERATOR_TOKEN_MIN, Settings, SettingsError
from services.operator import Operator
from tests.apps import make_app

TOKEN = "operator-token-0123456789"


@pytest.mark.parametrize(
    ("token", "ok"),
    [("x" * (OPERATOR_TOKEN_MIN - 1), False), ("x" * OPERATOR_TOKEN_MIN, True), ("", True)],
)
def test_the_operator_token_is_long_enough(token: str, ok: bool) -> None:
    environ = {"PERSISTENCE": "popo", "OPERATOR_TOKEN": token}
    if ok:
        assert Settings.from_env(environ).operator_token == (token or None)
    else:
        with pytest.raises(SettingsError, match="OPERATOR_TOKEN"):
            Settings.from_env(environ)


@pytest.mark.parametrize("path", ["/v1/events", "/v1/webhooks"])
def test_one_token_opens_the_feed_and_the_webhooks(path: str) -> None:
    with TestClient(make_app(operator_token=TOKEN)) as c:
        assert c.get(path, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        wrong = c.get(path, headers={"Authorization": "Bearer " + "y" * len(TOKEN)})
        assert wrong.status_code in (401, 403)
        assert wrong.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    ("configured", "presented", "is_operator"),
    [
        (TOKEN, TOKEN, True),
        (TOKEN, TOKEN + "x", False),
        (TOKEN, TOKEN[:-1], False),
        (TOKEN, None, False),
        (TOKEN, "", False),
        (None, TOKEN, False),
        ("", "", False),
    ],
)
def test_one_check_of_the_operator_token(
    configured: str | None, presented: str | None, is_operator: bool
) -> None:
    operator = Operator(configured)
    assert operator.configured is bool(configured)
    assert operator.is_operator(presented) is is_operator
