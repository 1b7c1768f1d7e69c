"""The A2A agent card's signing and verification (``signing.py``, ``verify.py``) and the
key it is signed with (``keys.py``); the card itself is assembled by ``domain/card.py``."""
