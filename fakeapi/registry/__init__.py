"""The registry: one generic store path for every kind, plus a small strategy per kind."""
