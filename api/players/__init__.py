"""Players' routes: accounts and sessions, seats claimed by a player, my matches, invites
and the lobby (docs/players.md)."""
