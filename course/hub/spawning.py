"""What each user's server runs: a student's from the students' environment in their home, the instructor's from
the course's environment in the course folder (FLASH_COURSE_DIR), nbgrader configured as in the checkout."""


def prepare(spawner, settings: dict) -> None:
    """JupyterHub's pre-spawn hook: the command, folder and environment of `spawner.user`'s server."""
    name = spawner.user.name
    if name == settings["instructor"]:
        python, folder = (
            settings["course_python"],
            settings["course_dir"],
        )  # formgrader needs nbgrader's root in it
        spawner.environment = {
            "FLASH_COURSE_DIR": settings["course_dir"],
            "JUPYTER_CONFIG_DIR": settings["instructor_config"],
        }
    else:
        python, folder = settings["student_python"], "~"
        spawner.environment = {}
    spawner.environment["PATH"] = f"{python.rsplit('/', 1)[0]}:/usr/local/bin:/usr/bin:/bin"
    spawner.cmd = [python, "-m", "jupyterhub.singleuser"]
    spawner.notebook_dir = folder
    spawner.args = ["--allow-root"] if name == "root" else []
