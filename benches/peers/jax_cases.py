#!/usr/bin/env python3
"""The JAX column of mochi's benchmark suite.

Runs the 13 cases of shared/bench-cases.md with jax.jit(jax.value_and_grad(f)) on the
CPU in float64, single-threaded, and writes
{"cases": {label: {"primal_ns", "gradient_ns", "spread", "samples"}}} for the main job
(cargo run --release -p mochi-benches) to merge. The main job runs this script only when
`python3 -c "import jax"` works, with XLA_FLAGS and OPENBLAS_NUM_THREADS set to one
thread. Compilation happens outside the timed region; every call waits for its result
(block_until_ready). Inputs are drawn with NumPy from a fixed seed: the same shapes and
distributions as the Rust suite, not the same numbers (ratios do not depend on them).
"""

import argparse
import json
import math
import os
import time

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

HALF_LN_2PI = 0.5 * math.log(2 * math.pi)


def truncation_log_mass():
    phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return math.log(phi((10 - 1) / 2) - phi((0.1 - 1) / 2))


def cases(rng):
    x1000 = rng.standard_normal(1000)
    a20, b40 = rng.standard_normal((20, 20)), rng.standard_normal((40, 40))
    a40, b40v = rng.standard_normal((40, 30)), rng.standard_normal((40, 40))
    x10 = rng.standard_normal((10, 10))
    w2 = rng.standard_normal((128, 256)) / 16.0
    w1 = rng.standard_normal((256, 128)) / math.sqrt(128)
    y, x = rng.standard_normal((128, 70)), rng.standard_normal((128, 70))
    gx = 0.2 * np.arange(128)
    k = np.exp(-0.5 * (gx[:, None] - gx[None, :]) ** 2) + np.eye(128)
    gy = np.linalg.cholesky(k) @ rng.standard_normal(128)
    data = rng.lognormal(1.5, 0.5, 100_000)
    theta = rng.standard_normal(2)
    log_mass = truncation_log_mass()

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

    def kron_sum(a, b):
        return jnp.sum(jnp.kron(a, b))

    def kron_view_sum(a, b):
        return kron_sum(a[:20, :20], jnp.triu(b))

    def naive_map(x):
        y = jnp.zeros_like(x)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                y = y.at[i, j].set(jnp.sin(jnp.cos(jnp.exp(x[i, j]))))
        return jnp.sum(y)

    def map_sin_cos_exp(x):
        return jnp.sum(jax.vmap(jax.vmap(lambda v: jnp.sin(jnp.cos(jnp.exp(v)))))(x))

    def broadcast(x):
        return jnp.sum(jnp.sin(jnp.cos(jnp.exp(x))))

    def mlp(w2, w1, y, x):
        h = w1 @ x
        r = h * (h >= 0)
        return jnp.sum((y - w2 @ r) ** 2)

    def gp_lml(x, y, s):
        n = x.shape[0]
        kk = jnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + s * jnp.eye(n)
        l = jnp.linalg.cholesky(kk)
        alpha = jax.scipy.linalg.solve_triangular(l, y, lower=True)
        logdet = 2 * jnp.sum(jnp.log(jnp.diag(l)))
        return -0.5 * (alpha @ alpha + logdet + n * math.log(2 * math.pi))

    def turing(theta, data):
        lo, hi = 0.1, 10.0
        p = jax.nn.sigmoid(theta)
        mu, sigma = lo + (hi - lo) * p[0], lo + (hi - lo) * p[1]
        log_jac = 2 * math.log(hi - lo) + jnp.sum(jnp.log(p) + jnp.log1p(-p))
        prior = lambda v: -0.5 * ((v - 1) / 2) ** 2 - math.log(2) - HALF_LN_2PI - log_mass
        lx = jnp.log(data)
        z = (lx - mu) / sigma
        return prior(mu) + prior(sigma) + log_jac + jnp.sum(-0.5 * z * z - jnp.log(sigma) - lx - HALF_LN_2PI)

    def block(x0, a):
        x = x0
        for _ in range(400):
            x = x * a
        return x

    return {
        "sum_1000": (jnp.sum, (x1000,), 0),
        "_sum_1000": (sum_loop, (x1000,), 0),
        "sum_sin_1000": (lambda x: jnp.sum(jnp.sin(x)), (x1000,), 0),
        "_sum_sin_1000": (sum_sin_loop, (x1000,), 0),
        "kron_sum": (kron_sum, (a20, b40), (0, 1)),
        "kron_view_sum": (kron_view_sum, (a40, b40v), (0, 1)),
        "naive_map_sin_cos_exp": (naive_map, (x10,), 0),
        "map_sin_cos_exp": (map_sin_cos_exp, (x10,), 0),
        "broadcast_sin_cos_exp": (broadcast, (x10,), 0),
        "simple_mlp": (mlp, (w2, w1, y, x), (0, 1, 2, 3)),
        "gp_lml": (gp_lml, (gx, gy, 1.0), (0, 1, 2)),
        "turing_broadcast_benchmark": (lambda t: turing(t, data), (theta,), 0),
        "large_single_block": (block, (0.9, 0.99), (0, 1)),
    }


def median_ns(fn, args, seconds, min_samples=5):
    fn(*args)  # compile and warm up
    start = time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - start, 1e-7)
    batch = max(1, int(1e-3 / once))
    samples = []
    deadline = time.perf_counter() + seconds
    while len(samples) < min_samples or (time.perf_counter() < deadline and len(samples) < 500):
        t0 = time.perf_counter()
        for _ in range(batch):
            out = fn(*args)
        jax.block_until_ready(out)
        samples.append((time.perf_counter() - t0) / batch * 1e9)
    samples.sort()
    q = lambda p: samples[int(p * (len(samples) - 1))]
    return q(0.5), (q(0.75) - q(0.25)) / q(0.5), len(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True)
    parser.add_argument("--cases", default="")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    seconds = 0.25 if args.quick else 1.5
    out = {}
    for label, (f, inputs, argnums) in cases(np.random.default_rng(0x6D6F636869)).items():
        if wanted and label not in wanted:
            continue
        inputs = tuple(jnp.asarray(v, dtype=jnp.float64) for v in inputs)
        primal = jax.jit(f)
        gradient = jax.jit(jax.value_and_grad(f, argnums=argnums))
        p, p_spread, _ = median_ns(primal, inputs, seconds)
        g, g_spread, n = median_ns(gradient, inputs, seconds)
        out[label] = {"primal_ns": p, "gradient_ns": g, "spread": g_spread, "primal_spread": p_spread, "samples": n}
    with open(args.json, "w") as fh:
        json.dump({"cases": out}, fh, indent=1)


if __name__ == "__main__":
    main()
