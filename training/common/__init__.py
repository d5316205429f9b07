"""What every trainer shares: the typed-YAML config toolkit, run folders and resume, progress."""
