"""Table talk: its commands and reads (R37, docs/decisions.md D-talk)."""
