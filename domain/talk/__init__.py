"""Table talk: the quick-chat catalogue and a match's messages, mutes and reports
(docs/decisions.md D-talk, rule R37)."""
