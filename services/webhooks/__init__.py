"""Webhooks: an outbox that follows the event log and a dispatcher (docs/webhooks.md)."""
