"""The cluster simulation of issue 50 item 4 (`benchmarks.cluster_sim`): a small class on a few nodes, seeded."""

from __future__ import annotations

import pytest

from benchmarks import cluster_sim as sim

NODES, SLOTS, STUDENTS = 4, 3, 30


def graded(lose_node: bool, seed: int = 7) -> sim.Run:
    costs, _ = sim.unit_costs([])
    pairs = sim.make_class(STUDENTS, costs, share=0.1, alpha=1.2, factor=1.0, seed=seed)
    return sim.simulate(pairs, NODES, SLOTS, lose_node)


def test_the_same_seed_grades_the_same_class_the_same_way():
    first, again, other = graded(True), graded(True), graded(True, seed=8)
    assert [p.attempts for p in first.pairs] == [p.attempts for p in again.pairs]
    assert first.makespan == again.makespan
    assert [p.cost for p in first.pairs] != [p.cost for p in other.pairs]


def test_every_pair_is_graded_once_and_a_lost_nodes_pairs_again_elsewhere():
    run = graded(True)
    assert len(run.pairs) == STUDENTS * len(sim.UNITS)
    assert len({(p.student, p.unit) for p in run.pairs}) == len(run.pairs)
    assert all(p.done is not None and p.attempts[-1][2] == p.done for p in run.pairs)
    assert run.timeline[-1][1] == len(run.pairs)  # as many completions as pairs: none graded twice
    assert run.lost_at is not None and run.timeline[len(run.pairs) // 2][0] <= run.lost_at
    requeued = [p for p in run.pairs if len(p.attempts) > 1]
    assert requeued, "the lost node was grading nothing"
    for pair in requeued:
        (cut_node, _, cut_end), (node, start, _) = pair.attempts
        assert (cut_node, cut_end) == (run.lost_node, run.lost_at) and node != run.lost_node
        assert start >= run.lost_at
    late = [a for p in run.pairs for a in p.attempts if a[0] == run.lost_node and a[1] >= run.lost_at]
    assert not late, "the dead node took work"


@pytest.mark.parametrize("lose_node", [False, True])
def test_no_node_grades_more_than_its_slots_and_the_makespan_is_bounded(lose_node):
    run = graded(lose_node)
    assert run.makespan >= run.work() / run.slots
    assert run.makespan >= max(p.cost for p in run.pairs)
    for node in range(NODES):
        starts_and_ends = [(a[1], 1) for p in run.pairs for a in p.attempts if a[0] == node]
        starts_and_ends += [(a[2], -1) for p in run.pairs for a in p.attempts if a[0] == node]
        busy = 0
        for _, step in sorted(starts_and_ends):  # an end before a start at the same moment
            busy += step
            assert busy <= SLOTS
    if (
        not lose_node
    ):  # Graham's bound for list scheduling: within the work over the slots plus the dearest pair
        assert run.makespan <= sim.paper(run.pairs, NODES, SLOTS, False) + 1e-6


def test_a_straggler_never_runs_past_the_job_timeout():
    costs = {"08_flash_attention_triton": [100.0]}
    pairs = sim.make_class(200, costs, share=1.0, alpha=0.5, factor=1.0, seed=0)
    assert max(p.cost for p in pairs) == sim.TIMEOUT and min(p.cost for p in pairs) >= 100.0
