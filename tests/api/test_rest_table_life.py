"""A table's life as a phone app lives it (docs/decisions.md D-table-life): private tables
refuse strangers and are never listed; a quick-play match states its end and turn limits
and is played to that end by bots after its one person leaves mid-match; a team resigns
(R32) and the table asks for a rematch, which starts once every person has confirmed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.accounts.feed import PlayerFeed, start_position
from tests.api.rest import GatedService, Json, Table, auth, choose, client, new_service, settle
from tests.api.test_rest_players import new_player
from tests.apps import settings_of


def listed(c: TestClient[Litestar]) -> list[str]:
    return [i["matchId"] for i in c.get("/v1/matches", params={"limit": 100}).json()["items"]]


def problem(r: object, status: int, code: str) -> Json:
    from httpx import Response  # noqa: PLC0415 - the test client's response type

    assert isinstance(r, Response)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: Json = r.json()
    assert body["code"] == code, body
    return body


@pytest.fixture(scope="module")
def shared() -> Iterator[TestClient[Litestar]]:
    """One app (the test settings) for the tests that work on matches and players of their
    own and neither read the match list nor move the clock."""
    with client() as c:
        yield c


@pytest.fixture(scope="module")
def idle() -> Iterator[tuple[GatedService, TestClient[Litestar]]]:
    """One app with sessions that end after 600 idle seconds, on a service whose clock the
    session tests move forward (each times its own sessions from the clock's then-time),
    and for the tests that read the match list (each looks for its own match only)."""
    service = new_service(table=settings_of(session_idle_s=600).table)
    with client(service, session_idle_s=600) as c:
        yield service, c


def test_a_private_table_refuses_a_strangers_seat_claim_and_is_not_listed(
    idle: tuple[GatedService, TestClient[Litestar]],
) -> None:
    _, c = idle
    made = c.post("/v1/matches", json={"name": "family", "visibility": "private"}).json()
    mid, organiser = made["matchId"], made["organiserToken"]
    url = f"/v1/matches/{mid}"
    assert mid not in listed(c)
    mine = auth(organiser)  # a private table is read by the people of the table (D-hidden)
    assert c.get(url, headers=mine).json()["visibility"] == "private"
    # a stranger: anonymously by the match id, or as a player — as for no match (D-hidden)
    problem(c.post(f"{url}/seats/1", json={"name": "stranger"}), 404, "not-found")
    stranger = new_player(c, "stranger")["token"]
    r = c.post("/v1/players/me/seats", json={"matchId": mid, "seat": 1}, headers=auth(stranger))
    problem(r, 404, "not-found")
    assert c.get(url, headers=mine).json()["seats"] == [None, None, None, None]  # unchanged
    # with a code: a friend names the seat opposite, so they sit as partners (R2)
    code = c.post(f"{url}/invites", headers=auth(organiser)).json()["code"]
    mei = new_player(c, "Mei")["token"]
    assert c.post(f"/v1/invites/{code}", headers=auth(mei)).json()["seat"] == 0
    r = c.post(f"/v1/invites/{code}", json={"seat": 2, "name": "Lan"})
    assert (r.status_code, r.json()["seat"]) == (201, 2)
    problem(c.post(f"/v1/invites/{code}", json={"seat": 2}), 409, "seat-taken")
    # the organiser seats whoever they like
    r = c.post(f"{url}/seats/1", json={"name": "uncle"}, headers=auth(organiser))
    assert r.status_code == 201, r.text
    assert [s and s["name"] for s in c.get(url, headers=mine).json()["seats"]] == [
        "Mei",
        "uncle",
        "Lan",
        None,
    ]
    assert mid not in listed(c)
    mine = c.get("/v1/players/me/matches", headers=auth(mei)).json()["current"]
    assert [m["matchId"] for m in mine] == [mid]  # the player's own list has it


def test_an_invite_makes_a_public_table_private(
    idle: tuple[GatedService, TestClient[Litestar]],
) -> None:
    _, c = idle
    made = c.post("/v1/matches", json={"name": "open"}).json()
    mid = made["matchId"]
    assert mid in listed(c)
    version = c.get(f"/v1/matches/{mid}").json()["version"]
    r = c.post(f"/v1/matches/{mid}/invites", headers=auth(made["organiserToken"]))
    assert r.status_code == 201, r.text
    assert mid not in listed(c)
    summary = c.get(f"/v1/matches/{mid}", headers=auth(made["organiserToken"])).json()
    assert (summary["visibility"], summary["version"]) == ("private", version)  # no move
    problem(c.post(f"/v1/matches/{mid}/seats/0", json={"name": "x"}), 404, "not-found")
    problem(c.get(f"/v1/matches/{mid}"), 404, "not-found")  # to strangers (D-hidden)


def play_as(c: TestClient[Litestar], url: str, token: str, moves: int) -> int:
    """The person's moves, as the app offers them (bots move off the request path in
    between), until ``moves`` were made or the match is over; answers the moves made."""
    for made in range(moves):
        settle(c)
        view = c.get(f"{url}/view", headers=auth(token)).json()
        choice = choose(view)
        if choice is None:
            assert c.get(url).json()["finished"], f"the person is offered nothing: {view}"
            return made
        r = c.post(f"{url}/actions/{choice[0]}", json={"cards": choice[1]}, headers=auth(token))
        assert r.status_code == 200, r.text
    return moves


def test_a_quick_play_match_is_played_to_its_end_after_its_one_person_leaves() -> None:
    with client(quick_play_rounds=1, quick_play_turn_ms=20_000) as c:
        player = new_player(c, "Mei")["token"]
        r = c.post("/v1/lobby/tickets", json={"botsAfterSeconds": 0}, headers=auth(player))
        assert r.status_code == 201, r.text
        ticket = c.get(r.headers["location"], headers=auth(player)).json()
        # the ticket states how the match ends and that turn timers run (R32, timers)
        assert ticket["matchEnd"] == "rounds:1"
        assert ticket["turnLimits"] == {"declareMs": 20_000, "buryMs": 40_000, "playMs": 20_000}
        assert ticket["status"] == "matched", ticket
        url = f"/v1/matches/{ticket['matchId']}"
        summary = c.get(url).json()
        assert summary["rules"]["matchEnd"] == "rounds:1"
        assert [s["kind"] for s in summary["seats"]].count("human") == 1
        assert play_as(c, url, player, 6) == 6  # declared or passed, then played
        assert c.get(url).json()["roundOpen"]
        # the person leaves mid-round: the timeout bot takes the seat, the table goes on
        r = c.post(f"/v1/players/me/matches/{ticket['matchId']}/leave", headers=auth(player))
        assert r.status_code == 200, r.text
        left = r.json()
        assert (left["seat"], left["replacedBy"]) == (ticket["seat"], "heuristic")
        again = c.post(f"/v1/players/me/matches/{ticket['matchId']}/leave", headers=auth(player))
        problem(again, 409, "not-seated")
        problem(
            c.post(f"{url}/actions/pass", json={"cards": []}, headers=auth(player)),
            403,
            "forbidden",
        )
        settle(c)
        summary = c.get(url).json()
        assert summary["finished"] and summary["rounds"][0]["status"] == "scored"
        seat = summary["seats"][ticket["seat"]]
        assert (seat["kind"], seat["left"]) == ("heuristic", True)
        mine = c.get("/v1/players/me/matches", headers=auth(player)).json()
        assert mine["current"] == [] and [m["matchId"] for m in mine["left"]] == [ticket["matchId"]]


def test_a_team_resigns_and_the_table_asks_for_a_rematch(shared: TestClient[Litestar]) -> None:
    c = shared
    made = c.post("/v1/matches", json={"name": "friends", "visibility": "private"}).json()
    mid, organiser = made["matchId"], made["organiserToken"]
    url = f"/v1/matches/{mid}"
    code = c.post(f"{url}/invites", headers=auth(organiser)).json()["code"]
    mei, lan = new_player(c, "Mei")["token"], new_player(c, "Lan")["token"]
    assert c.post(f"/v1/invites/{code}", json={"seat": 0}, headers=auth(mei)).status_code == 201
    assert c.post(f"/v1/invites/{code}", json={"seat": 2}, headers=auth(lan)).status_code == 201
    for seat in (1, 3):
        r = c.post(f"{url}/seats/{seat}/bot", json={"kind": "random"}, headers=auth(organiser))
        assert r.status_code == 201, r.text
    problem(c.post(f"{url}/rematch", headers=auth(mei)), 409, "match-not-finished")  # not over
    # R32: the team concedes once both its people resign
    first = c.post(f"{url}/resign", headers=auth(mei))
    assert first.status_code == 200, first.text
    assert (first.json()["finished"], first.json()["waitingFor"]) == (False, [2])
    problem(c.post(f"{url}/resign", headers=auth(mei)), 409, "already-resigned")
    assert not c.get(url, headers=auth(mei)).json()["finished"]
    second = c.post(f"{url}/resign", headers=auth(lan)).json()
    assert (second["finished"], second["waitingFor"]) == (True, [])
    summary = c.get(url, headers=auth(mei)).json()
    assert (summary["finished"], summary["winner"]) == (True, 1)
    # the rematch: bots seated at once, each person's seat kept until they confirm
    asked = c.post(f"{url}/rematch", headers=auth(mei))
    assert asked.status_code == 201, asked.text
    rematch = asked.json()
    assert (rematch["seat"], rematch["waitingFor"]) == (0, [2])
    assert rematch["token"].startswith("s.")
    new = f"/v1/matches/{rematch['matchId']}"
    assert c.get(url, headers=auth(mei)).json()["rematch"] == rematch["matchId"]
    waiting = c.get(new, headers=auth(lan)).json()  # Lan's seat is kept there: one of the table
    assert (waiting["rematchOf"], waiting["visibility"], waiting["roundNumber"]) == (
        mid,
        "private",
        0,
    )
    assert [s and s["kind"] for s in waiting["seats"]] == ["human", "random", None, "random"]
    stranger = new_player(c, "stranger")["token"]
    r = c.post(
        "/v1/players/me/seats",
        json={"matchId": rematch["matchId"], "seat": 2},
        headers=auth(stranger),
    )
    problem(r, 404, "not-found")  # a private table: as for no match (D-hidden)
    finished = c.get("/v1/players/me/matches", headers=auth(lan)).json()["finished"]
    assert [m["rematch"] for m in finished] == [rematch["matchId"]]
    confirmed = c.post(f"{url}/rematch", headers=auth(lan)).json()
    assert (confirmed["matchId"], confirmed["seat"], confirmed["waitingFor"]) == (
        rematch["matchId"],
        2,
        [],
    )
    started = c.get(new, headers=auth(lan)).json()
    assert started["roundNumber"] == 1 and [s["name"] for s in started["seats"]][::2] == [
        "Mei",
        "Lan",
    ]
    problem(c.post(f"{url}/rematch", headers=auth(lan)), 409, "rematch-confirmed")


def test_a_wrong_role_is_403_and_a_bad_token_401(shared: TestClient[Litestar]) -> None:
    c = shared
    made = c.post("/v1/matches").json()
    player = new_player(c)["token"]
    finish = f"/v1/matches/{made['matchId']}/finish"
    assert problem(c.post(finish, headers=auth(player)), 403, "forbidden")["detail"] == (
        "a player token cannot be used here: an organiser token is needed"
    )
    problem(c.post(finish, headers=auth("nonsense")), 401, "unauthorized")
    problem(c.post(finish), 401, "unauthorized")


def test_a_session_expires_when_idle_and_a_refresh_keeps_it(
    idle: tuple[GatedService, TestClient[Litestar]],
) -> None:
    service, c = idle
    clock = service.clock
    token = new_player(c)["token"]
    me = c.get("/v1/players/me", headers=auth(token)).json()
    assert me["sessionExpiresAt"] == (clock() + timedelta(seconds=600)).isoformat()
    clock.advance(seconds=500)  # type: ignore[attr-defined]
    r = c.post("/v1/players/me/sessions/current/refresh", headers=auth(token))
    assert r.status_code == 200, r.text
    assert r.json()["expiresAt"] == (clock() + timedelta(seconds=600)).isoformat()
    clock.advance(seconds=500)  # type: ignore[attr-defined]
    assert c.get("/v1/players/me", headers=auth(token)).status_code == 200
    clock.advance(seconds=101)  # type: ignore[attr-defined]
    expired = problem(c.get("/v1/players/me", headers=auth(token)), 401, "unauthorized")
    assert "expired" in expired["detail"]


def test_a_player_edits_their_name_and_locale(shared: TestClient[Litestar]) -> None:
    c = shared
    token = new_player(c, "Mei")["token"]
    r = c.patch("/v1/players/me", json={"displayName": "Mei Lin"}, headers=auth(token))
    assert r.status_code == 200, r.text
    assert (r.json()["displayName"], r.json()["locale"]) == ("Mei Lin", "en")
    r = c.patch("/v1/players/me", json={"locale": "zh-CN"}, headers=auth(token))
    assert (r.json()["displayName"], r.json()["locale"]) == ("Mei Lin", "zh-CN")
    problem(
        c.patch("/v1/players/me", json={"locale": "fr"}, headers=auth(token)),
        422,
        "validation-failed",
    )
    problem(
        c.patch("/v1/players/me", json={"nickname": "x"}, headers=auth(token)),
        422,
        "validation-failed",
    )


def test_problems_follow_the_players_stored_locale_and_say_their_language(
    shared: TestClient[Litestar],
) -> None:
    c = shared
    token = new_player(c, "Mei", locale="zh-CN")["token"]
    made = c.post("/v1/matches").json()
    finish = f"/v1/matches/{made['matchId']}/finish"
    # no Accept-Language: the player's own locale
    body = problem(c.post(finish, headers=auth(token)), 403, "forbidden")
    assert body["detail"] == "此令牌无权执行该操作。玩家令牌不能用于此操作；需要组织者令牌"
    r = c.post(finish, headers=auth(token))
    assert r.headers["content-language"] == "zh-CN"
    assert "Accept-Language" in r.headers["vary"]
    # a language asked for wins over the stored one
    r = c.post(finish, headers={**auth(token), "Accept-Language": "en"})
    assert (r.headers["content-language"], r.json()["title"]) == ("en", "Forbidden")
    # the kind of 401 in Chinese words
    r = c.post(finish, headers={"Authorization": "Basic x", "Accept-Language": "zh-CN"})
    assert r.json()["detail"] == "需要有效的令牌。`Authorization` 头应为 `Bearer <令牌>`"
    anonymous = c.post(finish, headers={"Accept-Language": "zh-CN"}).json()["detail"]
    assert anonymous == "需要有效的令牌。需要组织者令牌"
    # a forged token naming the account is not told the account's locale
    forged = "p." + token.split(".")[1] + ".forged"
    r = c.get("/v1/players/me", headers=auth(forged))
    assert (r.status_code, r.headers["content-language"]) == (401, "en")


def test_a_412_carries_the_current_etag(shared: TestClient[Litestar]) -> None:
    c = shared
    table = Table.seat_four(c)
    version = c.get(table.url).json()["version"]
    seat = table.public()["expected"]["seat"] or 0
    r = table.act(seat, "pass", [], **{"If-Match": f'"{version - 1}"'})
    problem(r, 412, "precondition-failed")
    assert r.headers["etag"] == f'"{version}"'
    assert table.act(seat, "pass", [], **{"If-Match": r.headers["etag"]}).status_code == 200


def test_the_player_feed_tells_every_turn_with_the_version_it_began(
    shared: TestClient[Litestar],
) -> None:
    """Many moves saved between two reads of the player's feed: each turn of the player's
    seat is one ``your-turn`` frame carrying the match version at which it began."""
    c = shared
    service = c.app.state.runtime.service
    made = c.post("/v1/matches").json()
    mid = made["matchId"]
    player = new_player(c, "Mei")
    r = c.post(
        "/v1/players/me/seats", json={"matchId": mid, "seat": 0}, headers=auth(player["token"])
    )
    assert r.status_code == 201, r.text
    feed = PlayerFeed(service, UUID(player["playerId"]), start_position(service))
    tokens = [player["token"]]
    for seat in (1, 2, 3):
        tokens.append(
            c.post(f"/v1/matches/{mid}/seats/{seat}", json={"name": f"g{seat}"}).json()["token"]
        )
    table = Table(c, mid, made["organiserToken"], tokens)
    began: list[int] = []
    before, mover = None, None
    for _ in range(60):
        version = c.get(table.url).json()["version"]
        expected = table.public()["expected"]
        acting = None if expected is None else expected["seat"]
        if acting == 0 and (before != 0 or mover == 0):
            began.append(version)
        before = acting
        mover = table.answers[-1][1] if table.answers else None
        assert table.step()
        mover = table.answers[-1][1]
    frames = [f for f in feed.poll() if f.kind == "your-turn"]
    assert [f.data["version"] for f in frames] == began
    assert all(f.data["yourTurn"] and f.data["seat"] == 0 for f in frames)
    assert [f.id for f in frames] == sorted({f.id for f in frames})


def read_everything(c: TestClient[Litestar], match_id: str, token: str | None = None) -> None:
    """Every read of a match answers (no 5xx): summary, public view, rounds, the whole
    history page by page, the state at every version; a finished match's record
    re-imports (R34, R35). ``token``: a private table's reader (one of the table, D-hidden)."""
    url = f"/v1/matches/{match_id}"
    h = auth(token) if token else {}
    summary = c.get(url, headers=h).json()
    for path in ("", "/public", "/rounds"):
        assert c.get(url + path, headers=h).status_code == 200, path
    after, seen = 0, 0
    while True:
        page = c.get(f"{url}/history", params={"after": after, "limit": 100}, headers=h).json()
        seen += len(page["items"])
        if not page["items"]:
            break
        after = page["items"][-1]["version"]
    assert seen == summary["version"]
    for version in range(1, summary["version"] + 1):
        r = c.get(f"{url}/state", params={"version": version}, headers=h)
        assert r.status_code == 200, (version, r.text)
    if summary["finished"] and summary["roundNumber"]:
        record = c.get(f"{url}/record", headers=h)
        assert record.status_code == 200, record.text
        again = c.post(
            "/v1/records", content=record.content, headers={"content-type": "application/json"}
        )
        assert again.status_code == 200, again.text


def test_tables_that_lived_through_leaving_resigning_and_a_rematch_read_and_reimport() -> None:
    with client(quick_play_rounds=1) as c:
        # a quick-play match whose person left mid-round, played to its end by bots
        player = new_player(c, "Mei")["token"]
        r = c.post("/v1/lobby/tickets", json={"botsAfterSeconds": 0}, headers=auth(player))
        ticket = c.get(r.headers["location"], headers=auth(player)).json()
        quick = ticket["matchId"]
        play_as(c, f"/v1/matches/{quick}", player, 5)
        assert (
            c.post(f"/v1/players/me/matches/{quick}/leave", headers=auth(player)).status_code == 200
        )
        settle(c)
        # a private table resigned mid-round, and its rematch in play
        made = c.post("/v1/matches", json={"visibility": "private"}).json()
        url = f"/v1/matches/{made['matchId']}"
        code = c.post(f"{url}/invites", headers=auth(made["organiserToken"])).json()["code"]
        guest = c.post(f"/v1/invites/{code}", json={"name": "Lan"}).json()["token"]
        for seat in (1, 2, 3):
            c.post(
                f"{url}/seats/{seat}/bot",
                json={"kind": "random"},
                headers=auth(made["organiserToken"]),
            )
        settle(c)
        assert c.post(f"{url}/resign", headers=auth(guest)).json()["finished"]
        rematch = c.post(f"{url}/rematch", headers=auth(guest)).json()
        assert rematch["waitingFor"] == []  # one person: the rematch starts at once
        settle(c)
        read_everything(c, quick)
        read_everything(c, made["matchId"], made["organiserToken"])
        read_everything(c, rematch["matchId"], rematch["token"])


def test_an_erased_player_leaves_the_tables_still_being_played(
    shared: TestClient[Litestar],
) -> None:
    c = shared
    player = new_player(c, "Mei")["token"]
    made = c.post("/v1/matches", json={"rules": {"matchEnd": "rounds:1"}}).json()
    url = f"/v1/matches/{made['matchId']}"
    r = c.post(
        "/v1/players/me/seats",
        json={"matchId": made["matchId"], "seat": 0},
        headers=auth(player),
    )
    assert r.status_code == 201, r.text
    for seat in (1, 2, 3):
        c.post(
            f"{url}/seats/{seat}/bot",
            json={"kind": "random"},
            headers=auth(made["organiserToken"]),
        )
    assert c.delete("/v1/players/me", headers=auth(player)).status_code == 204
    settle(c)
    summary = c.get(url).json()
    assert summary["finished"], "the table waited for an erased player"
    assert (summary["seats"][0]["kind"], summary["seats"][0]["left"]) == ("heuristic", True)
    assert summary["seats"][0]["name"] == "erased player"


def test_a_seat_token_minted_through_a_session_ends_with_it(
    idle: tuple[GatedService, TestClient[Litestar]],
) -> None:
    """A seat token a player got through a session (claiming a seat, a fresh seat token)
    works while that session does: idle past SESSION_IDLE_S or ended, it is a 401; a fresh
    one through another session works; a guest's token is no session's."""
    service, c = idle
    clock = service.clock
    made = c.post("/v1/matches").json()
    view = f"/v1/matches/{made['matchId']}/view"
    phone = new_player(c)["token"]
    tablet = c.post("/v1/players/me/sessions", headers=auth(phone)).json()["token"]
    claimed = c.post(
        "/v1/players/me/seats",
        json={"matchId": made["matchId"], "seat": 0},
        headers=auth(phone),
    )
    assert claimed.status_code == 201, claimed.text
    seat_token = claimed.json()["token"]
    guest = c.post(f"/v1/matches/{made['matchId']}/seats/1", json={"name": "ann"}).json()
    assert c.get(view, headers=auth(seat_token)).status_code == 200
    clock.advance(seconds=500)  # type: ignore[attr-defined]
    refreshed = c.post("/v1/players/me/sessions/current/refresh", headers=auth(tablet))
    assert refreshed.status_code == 200, refreshed.text
    clock.advance(seconds=101)  # type: ignore[attr-defined]  # the phone's session expired
    expired = problem(c.get(view, headers=auth(seat_token)), 401, "unauthorized")
    assert "expired" in expired["detail"]
    assert c.get(view, headers=auth(guest["token"])).status_code == 200
    url = f"/v1/players/me/matches/{made['matchId']}/seat-token"
    renewed = c.post(url, headers=auth(tablet))
    assert renewed.status_code == 200, renewed.text
    fresh = renewed.json()["token"]
    assert c.get(view, headers=auth(fresh)).status_code == 200
    session = c.get("/v1/players/me", headers=auth(tablet)).json()["sessionId"]
    ended = c.delete(f"/v1/players/me/sessions/{session}", headers=auth(tablet))
    assert ended.status_code == 204, ended.text
    ended_detail = problem(c.get(view, headers=auth(fresh)), 401, "unauthorized")["detail"]
    assert "ended" in ended_detail
