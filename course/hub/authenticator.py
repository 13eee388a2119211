"""The hub's login: a user on its roster (the hub's settings file) with the password they chose on their first
login (course.hub.accounts). No password is ever accepted for a name off the roster."""

from pathlib import Path

from jupyterhub.auth import Authenticator
from traitlets import Unicode

from course.hub import accounts


class RosterAuthenticator(Authenticator):
    hub_dir = Unicode(help="the hub's folder, which holds passwords.json").tag(config=True)

    async def authenticate(self, handler, data):
        name, password = data.get("username", ""), data.get("password", "")
        if name not in self.allowed_users:
            return None
        if not accounts.check_password(Path(self.hub_dir), name, password):
            return None
        return name
