#!/usr/bin/env python3
"""JAX beside the main job's second-order table.

For Rosenbrock (n = 100), `_sum_1000`, `_sum_sin_1000` and `large_single_block` (the
functions of benches/src/higher.rs), times jax.jit of the primal, of jax.grad, of the
Hessian-vector product jax.jvp(jax.grad(f), (x,), (v,)) and of jax.hessian, on the CPU
in float64, single-threaded, and writes {"rows": {label: {"primal_ns", "gradient_ns",
"hvp_ns", "hessian_ns"}}}. Compilation is outside the timed region; timing as in
jax_cases.py.
"""

import argparse
import json
import os

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jax_cases import median_ns  # noqa: E402

jax.config.update("jax_enable_x64", True)


def rosenbrock(x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return jnp.sum(100.0 * a * a + b * b)


def sum_loop(x):
    y = 0.0
    for n in range(x.shape[0]):
        y = y + x[n]
    return y


def sum_sin_loop(x):
    y = 0.0
    for n in range(x.shape[0]):
        y = y + jnp.sin(x[n])
    return y


def block(z):
    x = z[0]
    for _ in range(400):
        x = x * z[1]
    return x


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seconds = 0.25 if args.quick else 1.5
    rng = np.random.default_rng(0x6D6F636869)
    rows = {
        "rosenbrock n=100": (rosenbrock, rng.uniform(-1.2, 1.2, 100)),
        "_sum_1000": (sum_loop, rng.uniform(-1.0, 1.0, 1000)),
        "_sum_sin_1000": (sum_sin_loop, rng.uniform(-1.0, 1.0, 1000)),
        "large_single_block": (block, np.array([0.999, 1.0005])),
    }
    out = {}
    for label, (f, x) in rows.items():
        x = jnp.asarray(x, dtype=jnp.float64)
        v = jnp.asarray(rng.uniform(-1.0, 1.0, x.shape[0]), dtype=jnp.float64)
        grad = jax.grad(f)
        timed = {
            "primal_ns": (jax.jit(f), (x,)),
            "gradient_ns": (jax.jit(grad), (x,)),
            "hvp_ns": (jax.jit(lambda x, v: jax.jvp(grad, (x,), (v,))[1]), (x, v)),
            "hessian_ns": (jax.jit(jax.hessian(f)), (x,)),
        }
        out[label] = {k: median_ns(fn, a, seconds)[0] for k, (fn, a) in timed.items()}
    with open(args.json, "w") as fh:
        json.dump({"rows": out}, fh, indent=1)


if __name__ == "__main__":
    main()
