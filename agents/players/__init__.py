"""The players the rest of ``agents`` builds on: the Agent interface (:mod:`~agents.players.base`), the
random and rule-based players (``random_agent``, ``heuristic``, ``unseen``, ``human``) and the policy players
(``ppo_agent``: a policy file as an agent, its numpy forward pass; ``trained``: the shipped policies;
``rllib_agent``, ``rllib_module``: RLlib's; ``threads``: torch on one thread). The searches
(:mod:`agents.search`) and the spec registry (:func:`agents.make_agent`) sit above them."""
