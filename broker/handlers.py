"""Every family's handlers; importing this module registers them all."""

from broker.actions import handlers as actions  # noqa: F401
from broker.batch import handlers as batch  # noqa: F401
from broker.browser import handlers as browser  # noqa: F401
from broker.emulate import handlers as emulate  # noqa: F401
from broker.files import handlers as files  # noqa: F401
from broker.forms import handlers as forms  # noqa: F401
from broker.network import handlers as network  # noqa: F401
from broker.observe import handlers as observe  # noqa: F401
from broker.page import handlers as page  # noqa: F401
from broker.policy import handlers as policy  # noqa: F401
from broker.records import handlers as records  # noqa: F401
from broker.tabs import handlers as tabs  # noqa: F401
from broker.trace import handlers as trace  # noqa: F401
from broker.waits import handlers as waits  # noqa: F401
