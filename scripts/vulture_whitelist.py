# Names vulture reports as unused that are used, reviewed by hand (`make deadcode`).
# Made with `vulture ... --make-whitelist`, then grouped: vulture reads this file, never runs it
# (ruff skips it, mypy does not look here). Add a name only with the reason it is used.
# ruff: noqa

# -- msgspec Structs and dataclasses: fields written to JSON, read by clients, not by Python --
organiser_token  # api/dto.py, services/tournaments/answers.py
token_withheld  # api/dto.py, services/tournaments/answers.py
seeds_from  # api/dto.py (VerifyResponse)
presets  # api/rulebook.py
forced_play  # api/rules_oracle.py
aggregate_version  # services/history_items.py
follow_count  # services/legal.py
more_follows  # services/legal.py
leads  # services/legal.py (LegalActions)
throw  # services/dryrun.py (DryRun)
tested  # services/dryrun.py (ThrowCheck)
aggregates_at  # services/history.py: the summary as of a version (tests/property/test_view_summary.py)
attackers_won  # services/view_types.py (WonTrick)
ends_at  # services/view_types.py (DealView)
trick_winning  # services/view_types.py (PublicView)
won_tricks  # services/view_types.py (PublicView)
created_at  # services/summaries.py
team_levels  # services/summaries.py, services/view_types.py
seats_taken  # services/summaries.py
corrected  # services/tournaments/views.py
first_team  # services/tournaments/views.py
second_team  # services/tournaments/views.py
first_team_seats  # services/tournaments/views.py
rounds_completed  # services/tournaments/views.py
attackers_percent  # services/tournaments/travellers.py (TravellerLine)
defenders_percent  # services/tournaments/travellers.py (TravellerLine)
played_board  # services/tournaments/travellers.py (Traveller, RoundBoard)
attackers_matchpoints  # services/tournaments/travellers.py (TravellerLine; the traveller page)
defenders_matchpoints  # services/tournaments/travellers.py (TravellerLine; the traveller page)
tiebreaks  # services/tournaments/views.py
seat_tokens  # services/tournaments/answers.py (ScheduledRound, ReissuedTokens)
dealt_hands  # services/view_types.py
dealt_bottom  # services/view_types.py
versions  # services/view_types.py
level_rank  # services/view_types.py
trump_decided  # services/view_types.py
declarations  # services/view_types.py
fallback_card  # services/view_types.py, domain/game/round_events.py
turn_deadline  # services/view_types.py
hand_sizes  # services/view_types.py
trick_leader  # services/view_types.py
last_result  # services/view_types.py

# -- event fields: stored with the event, read by history, records and views by name --------
next_phase  # domain/game/round_events.py (DrawingEnded)
turn_began  # domain/game/round_events.py (TimedOut)

# -- frameworks call these ---------------------------------------------------------------------
_.request_body  # litestar Operation (api/records/controller.py, api/exports.py)
exception_handlers  # litestar Controller attribute (api/records/controller.py)
_.connection_made  # asyncio.Protocol (bench/_http.py, bench/_capacity_stream.py)
_.connection_lost  # asyncio.Protocol
_.data_received  # asyncio.Protocol
signum  # signal handler signature (bench/_profiled_serve.py)
memo  # __deepcopy__ signature (domain/values.py)
obj  # Transcoder.encode signature (services/codec.py)
_.to_stored_event  # eventsourcing Mapper (services/codec.py)
_.construct_mapper  # eventsourcing Application (services/game.py)
_.upcast_v1_v2  # eventsourcing upcasting convention (services/idempotency.py)
_.upcast_v2_v3  # eventsourcing upcasting convention (domain/game/match_events.py SeatTaken)
_.upcast_v3_v4  # eventsourcing upcasting convention (domain/game/match_events.py MatchCreated)
_.report_reasons  # a field of an answer, set by keyword (services/talk/reads.py Phrases)
_.enable_db_functions  # eventsourcing PostgresDatastore (infra/pgstore.py)
LockingInsertRecorder  # loaded by topic, infra.pgstore:LockingInsertRecorder (RECORDER_TOPIC)
_._srcfile  # logging module settings (infra/logging.py)
_.logThreads  # logging
_.logProcesses  # logging
_.logMultiprocessing  # logging

# -- the rules' vocabulary and queries the tests check the engine against (used by tests) ----
SPADES  # domain/rules/cards.py: the suits, one line (tests use SPADES, HEARTS)
HEARTS
CLUBS
DIAMONDS
rank_of  # domain/rules/cards.py: suit_of's pair (tests/property, tests/domain/test_cards.py)
_.successor  # domain/rules/context.py: R14 adjacency, the oracle of tests/domain/test_context.py
_.adjacent  # domain/rules/context.py: R14
_.sort_key  # domain/rules/context.py: R8–R11 order
_.largest  # domain/rules/shapes.py: a shape's largest component (property tests)
_.locks  # domain/rules/shows.py: R17 定主 (tests/domain/test_shows.py)
redeal_reason  # domain/rules/bidding.py: Bidding state the tests observe (R19, 暴动)
redeal_seat  # domain/rules/bidding.py
_.bury_takes_bottom  # domain/rules/bidding.py: R20 炒底 vs the first bury (tests/domain/test_bidding.py)
ROUND_EVENTS  # domain/game/round_events.py: the records tests check every event is covered
MOVE_EVENTS  # services/records/export.py: the same check
COMMANDS  # api/metrics.py: the label values (documented; tests/api/test_metrics.py)
OUTCOMES  # api/metrics.py
_.per_minute  # api/ratelimit.py: the limiter's setting, read by tests/api/test_schemathesis.py
_.due_at  # services/sweeper.py: when a match is next looked at (tests/services/test_timers_sweeper.py)
_.restart  # infra/pgcluster.py: the throwaway cluster for tests (tests/resilience)

# -- other branches' files, left to their owners ----------------------------------------------
played_points  # domain/bots/table.py (the bots branch)
_.partner  # domain/bots/view.py (the bots branch)
_.attacking  # domain/bots/view.py (the bots branch)
_.publish  # infra/hub.py (the lead is rewriting it)
_._conn  # infra/hub.py (the lead is rewriting it)

# -- PettingZoo's AEC environment protocol: read by pettingzoo and its api_test --
metadata  # services/training/env.py
possible_agents  # services/training/env.py
observation_space  # services/training/env.py
action_space  # services/training/env.py

# -- tournaments' organiser controls: msgspec response fields ---------------------------------
team_token  # services/tournaments/answers.py
first_name  # services/tournaments/answers.py
second_name  # services/tournaments/answers.py
overridden  # services/tournaments/answers.py
rounds_scheduled  # services/tournaments/listing.py
withdrawn_from_round  # services/tournaments/views.py
flagged_tables  # services/tournaments/views.py
_.deadlines  # services/tournaments/clerk.py: ClerkReport (read by tests)

# -- live streams ----------------------------------------------------------------------------
more  # services/history.py, summaries.py, tournaments/listing.py: page answers' field
__call__  # api/match_follower.py: the Store protocol

# -- the archive --
_.security  # api/feed.py: Litestar reads the controller's security
unregister  # services/projections.py: tests, and a feature removing its projection

# -- players (docs/players.md): msgspec response fields, written to JSON --
player_id  # api/players/dto.py
your_turn  # services/accounts/my_matches.py
delivery_id  # services/webhooks/subscriptions.py
next_attempt_at  # services/webhooks/subscriptions.py
_.policy  # services/webhooks/outbox.py: the eventsourcing ProcessApplication's hook

# -- the eventsourcing library's class attributes (read by the library) ------------------------
log_section_size  # services/game.py: Application.log_section_size
topics  # services/webhooks/outbox.py: Follower.topics
pull_section_size  # services/webhooks/outbox.py: Follower.pull_section_size

# -- the director's room (docs/tournaments.md): msgspec response fields, written to JSON --
next_round  # services/tournaments/display.py
next_pairing  # services/tournaments/display.py
next_bye  # services/tournaments/display.py
next_requested_byes  # services/tournaments/display.py
bye_lines  # services/tournaments/display.py
result_points  # services/tournaments/display.py: TableProgress.result_points
result_levels  # services/tournaments/display.py: TableProgress.result_levels
opponent  # services/tournaments/display.py
cancelled_rounds  # services/tournaments/views.py
published_round  # services/tournaments/views.py
html  # services/tournaments/display.py: DisplayFrame.html
# -- bench/fairplay_bench.py: the local JWKS server's handler, called by http.server --
do_GET  # bench/fairplay_bench.py (Provider's handler)
log_message  # bench/fairplay_bench.py (silences http.server's access log)

# -- the columnar dumps (services/analysis) ------------------------------------------------------
tell  # services/analysis/dump.py (_Sink): pyarrow's writers call a sink's tell()
schema_markdown  # services/analysis/schema.py: docs/analysis.md's schema (tests/analysis checks it)

# -- table life: msgspec response fields (api/players/dto.py) ----------------------------------
session_expires_at  # api/players/dto.py (Me / SessionRefreshed)
turn_limits  # api/players/dto.py (TicketView)
widens_at  # services/accounts/lobby_commands.py (RatingWindow)
expected_wait_seconds  # services/accounts/lobby_commands.py (RankedTicket)
expected_from_matches  # services/accounts/lobby_commands.py (RankedTicket)

# -- singledispatch registrations: called by the dispatching method, by the event's type --
match_created  # services/readmodels/projection.py (Lists.process_event)
match_changed  # services/readmodels/projection.py
round_changed  # services/readmodels/projection.py
seat_claimed  # services/readmodels/projection.py
match_left  # services/readmodels/projection.py
tournament_changed  # services/readmodels/projection.py

# -- ratings (docs/decisions.md D-ratings) -------------------------------------------------------
last_match_id  # services/ratings/boards.py (FamilyRating): a field written to JSON
_.account_erased  # services/ratings/projection.py: registered on process_event (singledispatchmethod)

# -- careers (docs/decisions.md D-career) -------------------------------------------------------
_.round_completed  # services/career/projection.py: registered on process_event (singledispatchmethod)
zh_cn  # services/career/notice.py (NoticeText): a field written to JSON as "zh-CN"
win_share  # services/career/reads.py (Partner): a field written to JSON
average_points_attacking  # services/career/reads.py (FamilyStatistics): written to JSON
average_points_defending  # services/career/reads.py (FamilyStatistics)
levels_per_round  # services/career/reads.py (FamilyStatistics)
families  # services/career/reads.py (Statistics)
tiebreak_values  # services/tournaments/display.py (a field of the JSON and the pages)
tie_rule  # services/tournaments/ranking.py (a field of the JSON and the pages)
attackers_name  # services/tournaments/travellers.py (a field of the JSON and the pages)
attacking_players  # services/tournaments/travellers.py (a field of the JSON and the pages)
defenders_name  # services/tournaments/travellers.py (a field of the JSON and the pages)
defending_seats  # services/tournaments/travellers.py (a field of the JSON and the pages)
defending_players  # services/tournaments/travellers.py (a field of the JSON and the pages)
_.accepted  # services/social/projection.py: registered on process_event (singledispatchmethod)
_.unblocked  # services/social/projection.py: registered on process_event (singledispatchmethod)
_.invitation_ended  # services/social/projection.py: registered on process_event
