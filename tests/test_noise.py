"""The stderr filter compiles on this Python and drops only harmless noise."""

import pytest

from course.noise import is_harmless


@pytest.mark.parametrize(
    "text",
    [
        "/x/y.py:3: UserWarning: TypedStorage is deprecated\n  warnings.warn(\n",
        "[W1122 20:00:00.000000 123 init.cpp:12] Warning: something harmless\n",
        "grading:  40%|████      | 2/5 [00:01<00:01]\r",
        "[IPKernelApp] WARNING | Kernel is running over TCP without encryption.\n",
    ],
)
def test_harmless_noise_is_dropped(text):
    assert is_harmless(text)


@pytest.mark.parametrize(
    "text",
    ["Traceback (most recent call last):\n", "AssertionError: O does not match\n", "Segmentation fault\n"],
)
def test_real_errors_are_kept(text):
    assert not is_harmless(text)
