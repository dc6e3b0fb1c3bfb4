"""A third game that exists only in the tests ("higher card wins", two seats), with its
own rules, plugin and proto view message. Importing this package registers it: from
then on the real table service plays it, though no line of the service names it."""

from tests.support.higher_card import rules
from tests.support.higher_card.plugin import CODE, INFO, PLUGIN
from tests.support.higher_card.view_message import HigherCardView

__all__ = ["CODE", "INFO", "PLUGIN", "HigherCardView", "rules"]
