"""Pictures of a game for people: text, JSON-ready scenes and RGB images.

- :mod:`~sm_env.display.render`: text rendering of a player's view or the whole table
- :mod:`~sm_env.display.scene`: the table as plain data (what the browser pages and the pictures draw)
- :mod:`~sm_env.display.picture`: the table as an RGB image (``render_mode="rgb_array"``), drawn from a scene

All of them see a game through :func:`sm_env.core.knowledge.player_view`.
"""
