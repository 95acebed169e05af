"""Email: an outbox row becomes a message with a text part (the reference) and an HTML part.

- :mod:`.dispatch`: what the worker calls (``build``, ``send``); it reads from the database
  what a builder needs besides the row's payload;
- :mod:`.builders`: one builder per email kind, in a table; each makes one context dict from
  which ``templates/email/<kind>/{subject.txt,body.txt,body.html}`` are rendered
  (:mod:`.render`);
- :mod:`.headers`: threading, one-click unsubscribe, the reply address, automatic-mail headers;
- :mod:`.smtp`: the SMTP session (TLS, login) or, without ``SMTP_HOST``, the outbox folder.
"""
