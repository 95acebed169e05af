"""dos_client: the `dos-client` command line (``cli`` and its ``commands`` on ``context``)."""
