"""Every command and its one handler, in one table: the bus of a service
(docs/decisions.md D-bus).

:func:`build_bus` injects each handler's dependencies once — the service (store, loads,
clock), the dealer and its deal sources (R35, R36), the bot driver's doorbell, the timeout
bot, the operator, the identity provider — as cosmicpython's ``bootstrap`` does. The
composition root (``infra.bootstrap``) calls it for the served app; tools and tests call it
for a service of their own. The table is what everything else that lists the commands
derives from (the test that every write route goes through the bus).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from uuid import UUID

from services.accounts.commands import (
    CreatePlayer,
    CreatePlayerHandler,
    EditProfile,
    EditProfileHandler,
    EndSession,
    EndSessionHandler,
    ErasePlayer,
    ErasePlayerHandler,
    OpenSession,
    OpenSessionHandler,
    RefreshSession,
    RefreshSessionHandler,
    RenewSeatToken,
    RenewSeatTokenHandler,
    RotateToken,
    RotateTokenHandler,
    SignInWithOidc,
    SignInWithOidcHandler,
)
from services.accounts.lobby_commands import (
    CancelTicket,
    CancelTicketHandler,
    MakeDueMatch,
    MakeDueMatchHandler,
    QueueTicket,
    QueueTicketHandler,
)
from services.accounts.oidc import OidcVerifier
from services.accounts.ranked import RankedQueues
from services.accounts.ranked_commands import (
    QueueRankedTicket,
    QueueRankedTicketHandler,
)
from services.accounts.seat_commands import (
    ClaimSeatAsPlayer,
    ClaimSeatAsPlayerHandler,
    CreateInvite,
    CreateInviteHandler,
    JoinByInvite,
    JoinByInviteHandler,
    LeaveMatch,
    LeaveMatchHandler,
)
from services.bus import Bus
from services.career.notices import NoteRatingChanges, NoteRatingChangesHandler
from services.dealer import Dealer, DealSource, FreshDeals
from services.feed_subscriptions import (
    AcknowledgeFeedRange,
    AcknowledgeFeedRangeHandler,
    ClaimFeedRange,
    ClaimFeedRangeHandler,
    CommitFeedPosition,
    CommitFeedPositionHandler,
    CreateFeedSubscription,
    CreateFeedSubscriptionHandler,
)
from services.game import GameService
from services.game_table import DEFAULT_TIMEOUT_BOT, Handlers, TimeoutBot, game_handlers, nobody
from services.limits import NO_ALLOWANCE, Allowance
from services.operator import NO_OPERATOR, Operator
from services.ratings.boards import RatingModels
from services.records.replay import ImportRecord, ImportRecordHandler
from services.social import commands as sc
from services.social.online_notices import NoteFriendOnline, NoteFriendOnlineHandler
from services.social.reads import SocialModels
from services.talk import commands as talk
from services.tournaments import commands as tc
from services.tournaments import control_commands as cc
from services.tournaments import director_commands as dc
from services.tournaments.results_policy import RecordTableResult, RecordTableResultHandler
from services.tournaments.seeds import TableDeals
from services.webhooks.commands import (
    RegisterWebhook,
    RegisterWebhookHandler,
    RemoveWebhook,
    RemoveWebhookHandler,
)
from services.webhooks.targets import PUBLIC_HTTPS, TargetPolicy


def table_deals(service: GameService) -> DealSource:
    """The deals of every match of ``service``: fresh (R35), a tournament table's from its
    tournament round (R36)."""
    return TableDeals(FreshDeals(service.seeds, service.pacing))


def build_bus(
    service: GameService,
    *,
    wake: Callable[[UUID], None] = nobody,
    timeout_bot: TimeoutBot = DEFAULT_TIMEOUT_BOT,
    operator: Operator = NO_OPERATOR,
    oidc: OidcVerifier | None = None,
    webhook_targets: TargetPolicy = PUBLIC_HTTPS,
    matches: Allowance = NO_ALLOWANCE,
    ratings: RatingModels | None = None,
    ranked: RankedQueues | None = None,
    social: SocialModels | None = None,
    invitation_ttl: timedelta = timedelta(minutes=10),
    friend_online_window: timedelta = timedelta(minutes=10),
) -> Bus:
    """The bus of ``service``: every command with its handler. ``wake``: the bot driver's
    doorbell; ``operator``: who runs webhooks and feed subscriptions (none by default);
    ``oidc``: the identity provider's verifier (sign-in off without one);
    ``webhook_targets``: where webhooks may post (``WEBHOOK_ALLOW_HTTP``,
    ``WEBHOOK_PRIVATE_TARGETS``); ``matches``: the match quota the matches a command makes
    are charged to (``MATCH_QUOTA_PER_HOUR``; none by default); ``ratings``: the ratings'
    read model — what seeds round 1 of a tournament seeded by rating (none: every player
    at the start) and what a ranked ticket reads its player's rating from (none: a view in
    memory, kept here); ``ranked``: the ranked queues as this process follows them (their
    expected waits; none: a follower of the bus's own); ``social``: the friends' read model
    and presence board (none: in memory, kept here); ``invitation_ttl``: how long a
    friend's table invitation lasts (``TABLE_INVITATION_TTL_S``); ``friend_online_window``:
    at most one ``friend-online`` notice of a player in it (``FRIEND_ONLINE_WINDOW_S``)."""
    social = social or SocialModels.in_memory(service)
    dealer = Dealer(table_deals(service))
    handlers: Handlers = game_handlers(service, dealer, wake=wake, timeout_bot=timeout_bot)
    handlers |= {
        # a player's seats and private tables
        ClaimSeatAsPlayer: ClaimSeatAsPlayerHandler(service, dealer),
        LeaveMatch: LeaveMatchHandler(service),
        # table talk (R37)
        talk.Say: talk.SayHandler(service),
        talk.Mute: talk.MuteHandler(service),
        talk.Unmute: talk.UnmuteHandler(service),
        talk.Report: talk.ReportHandler(service),
        CreateInvite: CreateInviteHandler(service),
        JoinByInvite: JoinByInviteHandler(service, dealer),
        # a player's account and sessions
        CreatePlayer: CreatePlayerHandler(service),
        SignInWithOidc: SignInWithOidcHandler(service, oidc),
        EditProfile: EditProfileHandler(service),
        RefreshSession: RefreshSessionHandler(service),
        OpenSession: OpenSessionHandler(service),
        RotateToken: RotateTokenHandler(service),
        EndSession: EndSessionHandler(service),
        RenewSeatToken: RenewSeatTokenHandler(service),
        ErasePlayer: ErasePlayerHandler(service, social),
        # friends, presence and table invitations (docs/decisions.md D-social)
        sc.SendFriendRequest: sc.SendFriendRequestHandler(service, social),
        sc.AnswerFriendRequest: sc.AnswerFriendRequestHandler(service, social),
        sc.WithdrawFriendRequest: sc.WithdrawFriendRequestHandler(service, social),
        sc.RemoveFriend: sc.RemoveFriendHandler(service, social),
        sc.BlockPlayer: sc.BlockPlayerHandler(service, social),
        sc.RotateFriendCode: sc.RotateFriendCodeHandler(service, social),
        sc.ChoosePresence: sc.ChoosePresenceHandler(service, social),
        sc.InviteFriend: sc.InviteFriendHandler(service, social, invitation_ttl),
        sc.AnswerInvitation: sc.AnswerInvitationHandler(service, social, dealer),
        # quick play
        QueueTicket: QueueTicketHandler(service, dealer),
        CancelTicket: CancelTicketHandler(service),
        MakeDueMatch: MakeDueMatchHandler(dealer),
        QueueRankedTicket: QueueRankedTicketHandler(
            service,
            dealer,
            ratings or RatingModels.in_memory(service),
            ranked or RankedQueues(),
        ),
        # the operator's
        RegisterWebhook: RegisterWebhookHandler(operator, webhook_targets),
        RemoveWebhook: RemoveWebhookHandler(operator),
        CreateFeedSubscription: CreateFeedSubscriptionHandler(operator),
        ClaimFeedRange: ClaimFeedRangeHandler(operator),
        AcknowledgeFeedRange: AcknowledgeFeedRangeHandler(operator),
        CommitFeedPosition: CommitFeedPositionHandler(operator),
        # the archive
        ImportRecord: ImportRecordHandler(),
        # tournaments (docs/tournaments.md)
        tc.CreateTournament: tc.CreateTournamentHandler(),
        tc.ScheduleRound: tc.ScheduleRoundHandler(service, dealer, ratings),
        tc.RunRoundBots: tc.RunRoundBotsHandler(service, wake),
        tc.CollectResults: tc.CollectResultsHandler(service),
        tc.FinishTable: tc.FinishTableHandler(service),
        tc.CorrectResult: tc.CorrectResultHandler(service),
        cc.RegisterTeam: cc.RegisterTeamHandler(service),
        cc.CheckIn: cc.CheckInHandler(service),
        cc.Withdraw: cc.WithdrawHandler(service),
        cc.Start: cc.StartHandler(service),
        cc.Forbid: cc.ForbidHandler(service),
        cc.Allow: cc.AllowHandler(service),
        cc.OverridePairings: cc.OverridePairingsHandler(service),
        cc.AdjustScore: cc.AdjustScoreHandler(service),
        cc.ReissueTokens: cc.ReissueTokensHandler(service),
        cc.ApplyDeadline: cc.ApplyDeadlineHandler(service),
        dc.EnterResult: dc.EnterResultHandler(service),
        dc.ChangeTimeControl: dc.ChangeTimeControlHandler(service),
        dc.SetRoundClock: dc.SetRoundClockHandler(service),
        dc.ExtendTable: dc.ExtendTableHandler(service),
        dc.PauseRound: dc.PauseRoundHandler(service),
        dc.ResumeRound: dc.ResumeRoundHandler(service),
        dc.CancelRound: dc.CancelRoundHandler(service),
        dc.RequestBye: dc.RequestByeHandler(service),
        dc.Substitute: dc.SubstituteHandler(service),
        dc.RenameTeam: dc.RenameTeamHandler(service),
        dc.FixTable: dc.FixTableHandler(service),
        dc.PublishPairing: dc.PublishPairingHandler(service, ratings),
        RecordTableResult: RecordTableResultHandler(),
        # a rated match's notices to its players (docs/decisions.md D-career)
        NoteRatingChanges: NoteRatingChangesHandler(social.board.ring),
        # a friend came online, for webhooks (docs/decisions.md D-social)
        NoteFriendOnline: NoteFriendOnlineHandler(int(friend_online_window.total_seconds())),
    }
    bus = Bus(service, handlers, matches=matches)
    bus.acted.append(social.board.acted)
    return bus
