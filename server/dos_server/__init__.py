"""dos_server: the Flask service (issue #3). Not built yet."""
