"""deploy/ (issue 36 item 3), checked on paper: every manifest parses, and the Helm values, the images, the
gradebook service and the Ray cluster agree with the course's own settings (course id, exchange root, image names
and version, the bundle, Python, the grading resources). Nothing here starts a container or a cluster."""

import ast
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from course import ROOT, bundle
from course.grading import pool, resources

DEPLOY = ROOT / "deploy"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
VERSION = PYPROJECT["version"]
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))


def documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kind(name: str) -> dict:
    found = [doc for path in MANIFESTS for doc in documents(path) if doc["kind"] == name]
    assert len(found) == 1, name
    return found[0]


def nbgrader_settings(path: Path) -> dict[str, str]:
    """{"CourseDirectory.course_id": …, "Exchange.root": …} as an nbgrader_config.py sets them (literals only)."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            target = ast.unparse(node.targets[0])
            if target.startswith("c."):
                found[target[2:]] = node.value.value
    return found


VALUES = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
IMAGES = nbgrader_settings(DEPLOY / "images" / "nbgrader_config.py")


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_every_manifest_parses_and_names_what_it_makes(path):
    for doc in documents(path):
        assert {"apiVersion", "kind", "metadata"} <= doc.keys()
        assert doc["metadata"]["name"] and doc["metadata"]["namespace"] == "flash-course"


def test_the_course_id_and_exchange_agree_everywhere():
    course_id = nbgrader_settings(ROOT / "nbgrader_config.py")["CourseDirectory.course_id"]
    assert IMAGES["CourseDirectory.course_id"] == VALUES["custom"]["course_id"] == course_id
    mounts = {m["name"]: m["mountPath"] for m in VALUES["singleuser"]["storage"]["extraVolumeMounts"]}
    claims = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in VALUES["singleuser"]["storage"]["extraVolumes"]
    }
    exchange = kind("PersistentVolumeClaim")
    assert exchange["spec"]["accessModes"] == ["ReadWriteMany"], "every user's pod mounts the exchange"
    assert claims["nbgrader-exchange"] == exchange["metadata"]["name"]
    assert mounts["nbgrader-exchange"] == IMAGES["Exchange.root"] == VALUES["custom"]["exchange_root"]


def test_the_images_are_the_bundle_and_the_course_at_this_version():
    python = re.search(r">=\s*(\d+\.\d+)", PYPROJECT["requires-python"]).group(1)
    student = (DEPLOY / "images" / "student.Dockerfile").read_text()
    instructor = (DEPLOY / "images" / "instructor.Dockerfile").read_text()
    for dockerfile in (student, instructor):
        assert re.search(rf"^FROM python:{re.escape(python)}-slim$", dockerfile, re.M)
        assert "COPY deploy/images/nbgrader_config.py /etc/jupyter/nbgrader_config.py" in dockerfile
    assert f"COPY build/{bundle.NAME} " in student and "course" not in student.split("COPY")[1].split("\n")[0]
    assert "[cluster,hub]" in instructor and "bubblewrap" in instructor
    image = VALUES["singleuser"]["image"]
    assert (image["name"], image["tag"]) == (bundle.NAME, VERSION)
    assert (
        f"-t {bundle.NAME}:{VERSION}" in student and f"-t flash-attention-instructor:{VERSION}" in instructor
    )
    ray = kind("RayCluster")["spec"]
    nodes = [ray["headGroupSpec"]] + ray["workerGroupSpecs"]
    images = {c["image"] for n in nodes for c in n["template"]["spec"]["containers"]}
    assert images == {VALUES["custom"]["instructor_image"]} == {f"flash-attention-instructor:{VERSION}"}


def test_the_ray_workers_fit_the_course_grading_jobs():
    ray = kind("RayCluster")["spec"]
    assert ray["headGroupSpec"]["rayStartParams"]["num-gpus"] == "0", "the head takes no grading job"
    workers = []
    for group in ray["workerGroupSpecs"]:
        params, limits = (
            group["rayStartParams"],
            group["template"]["spec"]["containers"][0]["resources"]["limits"],
        )
        gpus, cpus = int(params["num-gpus"]), int(params["num-cpus"])
        assert gpus == int(limits["nvidia.com/gpu"]) and cpus == int(limits["cpu"]), group["groupName"]
        gib = float(group["template"]["metadata"]["annotations"]["flash-attention-course/gpu-memory-gib"])
        memory_gib = int(limits["memory"].removesuffix("Gi"))
        jobs = resources.default_jobs(1 << 30, cpus // gpus, gib) * gpus
        assert jobs >= 1 and memory_gib >= 4 * jobs, "host memory for every job the worker runs at once"
        workers.append({"cpus": cpus, "gpus": gpus, "gpu_gib": gib})
    shape = pool.task_shape(workers)
    assert shape[1] > 0, "every grading job lands on a GPU worker"
    assert pool.capacity(workers, shape) >= 1


def test_the_gradebook_service_is_the_instructors_database():
    service, database = kind("Service"), kind("StatefulSet")
    env = {e["name"]: e for e in database["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (
        env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"]
        == VALUES["custom"]["gradebook_url_secret"]
    )
    header = (DEPLOY / "k8s" / "postgres.yaml").read_text()
    url = re.search(r"url=(postgresql://\S+)", header).group(1)
    user, host, port, name = re.match(r"postgresql://(\w+):…@([\w-]+):(\d+)/(\w+)", url).groups()
    assert (user, name) == (env["POSTGRES_USER"]["value"], env["POSTGRES_DB"]["value"])
    assert host == service["metadata"]["name"] and int(port) == service["spec"]["ports"][0]["port"]
    assert "FLASH_COURSE_DB" in VALUES["hub"]["extraConfig"]["course"]


def test_the_hubs_course_hook_is_python():
    compile(VALUES["hub"]["extraConfig"]["course"], "values.yaml: hub.extraConfig.course", "exec")
