"""Bad input raises a ValueError naming the problem, in both languages."""

import pytest
import torch

from utils.attention.naive import naive_attention
from utils.attention.validate import check_qkv

GOOD = torch.zeros(2, 8, 16)


@pytest.mark.parametrize(
    ("q", "k", "v", "head_dims", "needle"),
    [
        (GOOD, torch.zeros(3, 8, 16), torch.zeros(3, 8, 16), None, "batch/head dims differ"),
        (GOOD, torch.zeros(2, 8, 32), torch.zeros(2, 8, 32), None, "head dim d differs"),
        (GOOD, GOOD, torch.zeros(2, 9, 16), None, "different sequence lengths"),
        (GOOD, GOOD.double(), GOOD, None, "different dtypes"),
        (GOOD, GOOD, GOOD.to(torch.device("meta")), None, "different devices"),
        (torch.zeros(2, 0, 16), GOOD, GOOD, None, "empty"),
        (GOOD.long(), GOOD.long(), GOOD.long(), None, "floating point"),
        (torch.zeros(16), GOOD, GOOD, None, "at least 2 dims"),
        ([[0.0]], GOOD, GOOD, None, "torch.Tensor"),
        (
            torch.zeros(2, 8, 24),
            torch.zeros(2, 8, 24),
            torch.zeros(2, 8, 24),
            (16, 32),
            "unsupported head dim d=24",
        ),
    ],
)
def test_bad_input_is_named(q, k, v, head_dims, needle):
    with pytest.raises(ValueError, match=needle) as error:
        check_qkv(q, k, v, head_dims=head_dims)
    assert " / " in str(error.value)  # Chinese / English


def test_naive_attention_validates_too():
    with pytest.raises(ValueError, match="head dim"):
        naive_attention(GOOD, torch.zeros(2, 8, 32), torch.zeros(2, 8, 32))
