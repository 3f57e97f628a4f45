"""warpwise.server: the language server and the ``warpwise`` command line."""
