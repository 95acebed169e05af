"""dos_client: the `dos-client` command (issue #4). Not built yet."""
