"""warpwise."""
