"""Memoization of contention episodes: canonical episode keys and the persistent store they index."""
