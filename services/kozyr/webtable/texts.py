"""The page server's player-facing refusals, in every player language."""

from __future__ import annotations

from typing import Final

from kozyr.texts import Texts

BAD_NAME: Final = Texts(
    en="A name is 1 to 64 letters, digits, dots, dashes or underscores.",
    ro="Un nume are între 1 și 64 de litere, cifre, puncte, cratime sau liniuțe de subliniere.",
    it="Un nome ha da 1 a 64 lettere, cifre, punti, trattini o trattini bassi.",
)
NO_DEV_LOGIN: Final = Texts(
    en="This server does not issue development tokens: log in with a token.",
    ro="Acest server nu emite tokenuri de dezvoltare: intrați cu un token.",
    it="Questo server non rilascia token di sviluppo: entra con un token.",
)
BAD_REQUEST: Final = Texts(
    en='Send JSON: {"player": "NAME"}.',
    ro='Trimiteți JSON: {"player": "NUME"}.',
    it='Invia JSON: {"player": "NOME"}.',
)
