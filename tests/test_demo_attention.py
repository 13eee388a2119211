"""Notebook demos compare against the course's reference where the instructor package is installed, else SDPA."""

import sys

import pytest
import torch

import course.reference
import utils
from utils.attention import course_kernels, demo, demo_attention, sdpa
from utils.grading import random_qkv, reference_attention


@pytest.fixture
def without_reference(monkeypatch):
    """As on a student's machine: `course.reference` cannot be imported."""
    monkeypatch.setitem(sys.modules, "course.reference", None)


def test_utils_exports_no_reference_solution():
    for name in ("FlashAttentionPyTorch", "FlashAttentionTriton", "flash_attention"):
        assert not hasattr(utils, name) and not hasattr(utils.attention, name)


def test_course_kernels_is_the_instructor_package_where_installed():
    assert course_kernels() is course.reference


def test_course_kernels_is_none_without_it(without_reference):
    assert course_kernels() is None


def test_a_broken_reference_package_is_not_mistaken_for_a_missing_one(monkeypatch, tmp_path):
    (tmp_path / "broken_reference").mkdir()
    (tmp_path / "broken_reference" / "__init__.py").write_text("import a_dependency_that_is_missing\n")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.setattr(demo, "REFERENCE_PACKAGE", "broken_reference")
    with pytest.raises(ModuleNotFoundError, match="a_dependency_that_is_missing"):
        course_kernels()


def test_demo_attention_is_the_reference_where_installed(capsys):
    attention, label = demo_attention()
    assert attention is course.reference.flash_attention and "course.reference" in label
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("is_causal", [False, True])
def test_demo_attention_falls_back_to_sdpa_with_a_note(without_reference, capsys, is_causal):
    attention, label = demo_attention()
    assert (attention, label) == (sdpa, "SDPA")
    note = capsys.readouterr().out
    assert note.count("\n") == 1 and "scaled_dot_product_attention stands in" in note and " / " in note
    q, k, v = random_qkv((2, 3), 17, 29, 16, device=utils.device(), requires_grad=False)
    out = attention(q, k, v, is_causal)
    assert out.shape == q.shape
    torch.testing.assert_close(out.double(), reference_attention(q, k, v, is_causal)[0], atol=1e-5, rtol=1e-5)
