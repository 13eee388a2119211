"""nbgrader's settings in both images (/etc/jupyter/nbgrader_config.py): the course and the exchange, a
ReadWriteMany volume mounted at the same path in every user's pod (deploy/helm/values.yaml)."""

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)
c.CourseDirectory.course_id = "flash-attention-first-principles"
c.Exchange.root = "/srv/nbgrader/exchange"
