"""Channels: how an outbox row reaches a person (SMTP email) or a program (webhook)."""
