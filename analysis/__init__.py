"""warpwise.analysis: the domain (binaries, profiles, program structure, blame, advice, rewrites, tuning).

Never imports the language server (pygls/lsprotocol)."""
