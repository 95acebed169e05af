"""The ``dos-client`` commands by role, each module a tuple ``COMMANDS`` that ``cli`` registers:
``lobby`` (create, join, list, host), ``play`` (the table and moves), ``follow`` (history,
waiting, watching), ``seat`` (your seat's settings), ``account`` (server and sign-in), ``docs``
(rules and completion)."""
