"""Training: single-seat wrapper, opponent pool, PPO trainer, duplicate evaluation, config schema."""
