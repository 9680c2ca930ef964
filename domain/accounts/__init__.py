"""Players' accounts (a person across devices and matches) and the lobby's tickets.

``domain/bots`` holds the bots' policies; a person is an *account* here."""
