"""The hub's accounts: who may log in (the roster's students and the instructor), their Unix users, their
first-use passwords (stored hashed in the hub's folder, readable by root only)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pwd
import re
import secrets
import subprocess
from pathlib import Path

from utils.messages import bilingual

UNIX_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
MIN_PASSWORD = 8
CREATED = "accounts.json"  # the Unix users this hub created (it never takes over one it did not create)
PASSWORDS = "passwords.json"
INSTRUCTOR_PASSWORD = "instructor-password.txt"
SCRYPT = dict(n=2**14, r=8, p=1)


def check_names(names: list[str]) -> None:
    """Every name must be a Unix user name (lower-case letters, digits, _ and -, at most 32)."""
    bad = [name for name in names if not UNIX_NAME.match(name)]
    if bad:
        raise ValueError(
            bilingual(
                f"这些学号不能作为 Unix 账户名：{', '.join(bad)}（只用小写字母、数字、_ 和 -，以字母开头）",
                f"these student ids cannot be Unix user names: {', '.join(bad)} (lower-case letters, digits, _ "
                "and -, starting with a letter)",
            )
        )


def read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def write_private(path: Path, data: dict) -> None:
    """Write `data` as JSON readable by root only, replacing the file in one step."""
    write_secret(path, json.dumps(data, indent=1, sort_keys=True))


def write_secret(path: Path, text: str) -> None:
    """Replace `path` in one step by a file holding `text`, readable by root only from its creation (made then
    chmod-ed, a student polling the hub's folder, 0755, could open it in between and keep reading)."""
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "w") as out:
        out.write(text)
    tmp.replace(path)


def ensure_students(hub_dir: Path, students: list[str]) -> list[str]:
    """A Unix user for each student (created here, home 0700, no password of its own); returns those created now.
    A name that is already a Unix user this hub did not create is refused: the hub never takes over an account."""
    created = read_json(hub_dir / CREATED)
    new = []
    for name in students:
        if name in created:
            continue
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(
                ["useradd", "--create-home", "--user-group", "--shell", "/bin/bash", name],
                check=True,
                capture_output=True,
            )
            created[name] = pwd.getpwnam(name).pw_uid
            new.append(name)
            continue
        raise ValueError(
            bilingual(
                f"账户 {name} 已存在且不是本 hub 创建的：改用另一个学号，或删除该账户",
                f"the account {name} exists and was not created by this hub: use another student id or remove it",
            )
        )
    write_private(hub_dir / CREATED, created)
    for name in students:
        Path(pwd.getpwnam(name).pw_dir).chmod(0o700)
    return new


def hashed(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def matches(password: str, stored: str) -> bool:
    _, salt, _ = stored.split("$")
    return hmac.compare_digest(hashed(password, bytes.fromhex(salt)), stored)


def check_password(hub_dir: Path, name: str, password: str) -> bool:
    """True when `password` is the user's; on the user's first login it becomes their password (at least
    MIN_PASSWORD characters)."""
    path = hub_dir / PASSWORDS
    stored = read_json(path)
    if name in stored:
        return matches(password, stored[name])
    if len(password) < MIN_PASSWORD:
        return False
    stored[name] = hashed(password)
    write_private(path, stored)
    return True


def instructor_password(hub_dir: Path, name: str) -> str | None:
    """On the hub's first start, a random password for the instructor (an admin: never left to whoever logs in
    first), stored hashed and written once to instructor-password.txt (root only); None once one is set."""
    path = hub_dir / PASSWORDS
    stored = read_json(path)
    if name in stored:
        return None
    password = secrets.token_urlsafe(12)
    stored[name] = hashed(password)
    write_private(path, stored)
    write_secret(hub_dir / INSTRUCTOR_PASSWORD, password + "\n")
    return password


def forget_password(hub_dir: Path, name: str) -> bool:
    """Drop a user's password (they set a new one on their next login); False if they had none."""
    path = hub_dir / PASSWORDS
    stored = read_json(path)
    if stored.pop(name, None) is None:
        return False
    write_private(path, stored)
    return True


def home_of(name: str) -> Path:
    return Path(pwd.getpwnam(name).pw_dir)


def owner_of(path: Path) -> str:
    return pwd.getpwuid(os.stat(path).st_uid).pw_name
