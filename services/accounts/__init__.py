"""Players' accounts, invites and the lobby (docs/players.md), on the game's own store so
an account's seat and the match's ``SeatTaken`` commit in one save."""
