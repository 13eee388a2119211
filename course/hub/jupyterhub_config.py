"""JupyterHub's configuration for the course's hub, read from the settings file that `python -m course.hub` writes
(FLASH_HUB_SETTINGS): the roster's students and the instructor, each on a Unix account of their own."""

import json
import os

from course.hub.spawning import prepare

settings = json.loads(open(os.environ["FLASH_HUB_SETTINGS"]).read())
hub = settings["hub_dir"]
c = get_config()  # noqa: F821 (provided by traitlets when jupyterhub loads this file)

c.JupyterHub.bind_url = f"http://{settings['ip']}:{settings['port']}"
c.JupyterHub.hub_port = settings["port"] + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['port'] + 2}"
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
private = settings["private_dir"]  # root only: JupyterHub's database (token hashes) and cookie secret
c.ConfigurableHTTPProxy.pid_file = f"{private}/jupyterhub-proxy.pid"
c.JupyterHub.db_url = f"sqlite:///{private}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{private}/jupyterhub_cookie_secret"
c.JupyterHub.cleanup_servers = True  # Ctrl-C stops every server the hub started
c.JupyterHub.cleanup_proxy = True

c.JupyterHub.authenticator_class = "course.hub.authenticator.RosterAuthenticator"
c.RosterAuthenticator.hub_dir = hub
c.Authenticator.allowed_users = set(settings["students"]) | {settings["instructor"]}
c.Authenticator.admin_users = {settings["instructor"]}

c.JupyterHub.spawner_class = "localprocess"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120  # two busy cores
c.Spawner.http_timeout = 120
c.Spawner.pre_spawn_hook = lambda spawner: prepare(spawner, settings)
