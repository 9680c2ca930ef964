"""The feed and the players' data (D3, D17): the public feed shows no account,
session, invite, ticket or webhook event and no token hash or account id; the operator
reads them all, names decrypted, but never a webhook's signing secret."""

from __future__ import annotations

from domain.rules.ruleset import preset
from tests.archive.test_feed import everything
from tests.commands import claim_as_player, create_match, create_player
from tests.commands import register_webhook as register
from tests.conftest import Backend

PLAYERS_TYPES = {"AccountCreated", "SeatClaimed", "SubscriptionRegistered"}


def test_the_public_feed_shows_nothing_personal_and_the_operator_all(backend: Backend) -> None:
    service = backend.service()
    mid = create_match(service, preset("standard"), name="private", preset="standard")
    account, _ = create_player(service, "Mei", "en", "phone")
    claim_as_player(service, account, mid, 0)
    register(service, "https://push.example/hook", "s" * 32, ("your-turn",))

    public = everything(service)
    assert not PLAYERS_TYPES & {i.type for i in public}
    assert {i.stream.kind for i in public} <= {"match", "round", "tournament"}
    (seated,) = [i for i in public if i.type == "SeatTaken"]
    assert seated.data["player"] == "Mei"  # public as the seats are
    assert {"tokenHash", "accountId"} <= set(seated.hidden)
    assert "accountId" not in seated.data

    operator = {i.type: i for i in everything(service, operator=True)}
    assert set(operator) >= PLAYERS_TYPES
    assert operator["SeatTaken"].data["accountId"] == str(account.id)
    assert operator["AccountCreated"].data["displayName"] == "Mei"
    assert operator["AccountCreated"].stream.kind == "other"
    hook = operator["SubscriptionRegistered"]
    assert "secret" not in hook.data and "secret" in hook.hidden
    assert hook.data["url"] == "https://push.example/hook"
