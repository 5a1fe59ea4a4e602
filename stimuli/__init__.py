"""twinlab stimuli package."""
