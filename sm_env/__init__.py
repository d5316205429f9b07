"""Sergeant Major (3-5-8): a rules-exact engine and PettingZoo environment."""
