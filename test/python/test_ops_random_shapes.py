"""Op families on random shapes, compiled by Thunder for the CPU and compared with eager.

test_ops_numerics.py fixes its shapes; here each case draws them from a seed: ranks 1 to
4, sizes that are 1, odd, powers of two or just past them (the edges of vector loops and
tiles), a second operand that broadcasts along random dims, and a random dim for the
reductions, scans, concatenations, flips and slices. One module per (seed, dtype), one
compile, checked op by op with test_ops_numerics's tolerances and harness.

The seeds are fixed, so a failure repeats; THUNDER_RANDOM_SHAPES_SEED=<n> shifts all of
them to draw new shapes (tools/dev.sh test --sanitize runs this suite under ASan and
UBSan, where an out-of-bounds kernel on an odd size is what it is after).
"""
from __future__ import annotations

import os
import random

import pytest
import torch

from test_ops_numerics import BF16, F16, F32, F64, I32, I64, dtype_key, make, run_family

SEED_BASE = int(os.environ.get("THUNDER_RANDOM_SHAPES_SEED", "0"))
SIZES = [1, 1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 31, 33]

#: (seed, dtype) cases: three seeds for the common dtypes, one for the others.
CASES = [(seed, dtype) for seed in range(3) for dtype in (F32, BF16, I64)] + \
    [(3, F64), (3, F16), (3, I32)]


def draw(seed: int):
    """The shapes and dims of one case: x's shape, y's (broadcasting to x), a dim of x,
    a permutation, a slice of that dim, and a matmul's m, k, n."""
    rng = random.Random(SEED_BASE * 1000 + seed)
    rank = rng.randint(1, 4)
    # Keep the elements of x below ~20k so that a sanitized compile and run stay quick.
    while True:
        shape = tuple(rng.choice(SIZES) for _ in range(rank))
        if torch.Size(shape).numel() <= 20000:
            break
    # y: x's trailing dims, some of them 1, maybe fewer of them.
    lead = rng.randint(0, rank - 1)
    y_shape = tuple(1 if rng.random() < 0.4 else n for n in shape[lead:])
    dim = rng.randrange(rank)
    perm = list(range(rank))
    rng.shuffle(perm)
    start = rng.randrange(shape[dim])
    length = rng.randint(1, shape[dim] - start)
    mkn = tuple(rng.choice(SIZES) for _ in range(3))
    return shape, y_shape, dim, perm, (start, length), mkn


def random_family(seed: int):
    shape, y_shape, dim, perm, (start, length), (m, k, n) = draw(seed)

    def build(dtype):
        floating = dtype.is_floating_point
        ops = {
            "add": lambda x, y, p, a, b: x + y,
            "mul": lambda x, y, p, a, b: x * y,
            "sub_scalar": lambda x, y, p, a, b: x - 3,
            "where": lambda x, y, p, a, b: torch.where(x > y, x, y),
            "maximum": lambda x, y, p, a, b: torch.maximum(x, y),
            "abs_neg": lambda x, y, p, a, b: -x.abs(),
            "clamp": lambda x, y, p, a, b: x.clamp(-1, 2),
            "sum_dim": lambda x, y, p, a, b: x.sum(dim),
            "amax_dim": lambda x, y, p, a, b: x.amax(dim, keepdim=True),
            "argmax_dim": lambda x, y, p, a, b: x.argmax(dim),
            "cumsum_dim": lambda x, y, p, a, b: x.cumsum(dim),
            "permute": lambda x, y, p, a, b: x.permute(perm) * 2,
            "cat_dim": lambda x, y, p, a, b: torch.cat([x, p], dim),
            "flip_dim": lambda x, y, p, a, b: x.flip(dim),
            "narrow_dim": lambda x, y, p, a, b: x.narrow(dim, start, length) + 1,
            "expand_add": lambda x, y, p, a, b: y.expand(shape) + p,
            "matmul": lambda x, y, p, a, b: a @ b,
        }
        if floating:
            ops.update({
                "div": lambda x, y, p, a, b: x / p,
                "exp": lambda x, y, p, a, b: torch.exp(x.clamp(max=4)),
                "tanh": lambda x, y, p, a, b: torch.tanh(x),
                "sqrt": lambda x, y, p, a, b: p.sqrt(),
                "mean_dim": lambda x, y, p, a, b: x.mean(dim, keepdim=True),
                "softmax_dim": lambda x, y, p, a, b: x.softmax(dim),
                "sum_all": lambda x, y, p, a, b: x.sum(),
            })
            if shape[dim] > 1:
                ops["var_dim"] = lambda x, y, p, a, b: x.var(dim)
        layout = "transposed" if len(shape) >= 2 and seed % 2 == 0 else "contiguous"
        inputs = (make(shape, dtype, "small" if not floating else "normal", layout, seed),
                  make(y_shape, dtype, "small" if not floating else "normal", seed=seed + 1),
                  make(shape, dtype, "positive", seed=seed + 2),
                  make((m, k), dtype, "small" if not floating else "normal", seed=seed + 3),
                  make((k, n), dtype, "small" if not floating else "normal", "transposed",
                       seed=seed + 4))
        return ops, inputs

    return build


@pytest.mark.parametrize("seed,dtype", CASES,
                         ids=[f"seed{s}-{dtype_key(d)}" for s, d in CASES])
def test_random_shapes(seed, dtype, cache_dir):
    shape, y_shape, dim, perm, narrow, mkn = draw(seed)
    print(f"\nseed {SEED_BASE * 1000 + seed}: x {list(shape)}, y {list(y_shape)}, dim {dim}, "
          f"perm {perm}, narrow {narrow}, matmul m,k,n {mkn}")
    run_family(f"random_s{seed}", random_family(seed), dtype, cache_dir)


def test_draws_cover_the_edges():
    """The fixed seeds reach broadcasting, size-1 dims and every rank."""
    draws = [draw(seed) for seed, _ in CASES]
    assert len({len(x) for x, *_ in draws}) >= 3  # ranks
    assert any(y != x[len(x) - len(y):] for x, y, *_ in draws)  # a dim broadcasts
    assert any(len(y) < len(x) for x, y, *_ in draws)  # y has fewer dims
    assert any(1 in x for x, *_ in draws)
