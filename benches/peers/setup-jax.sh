#!/bin/sh
# Installs JAX (CPU) for the main job's JAX column into target/jax-venv, where the main
# job finds it (or set MOCHI_PYTHON to another interpreter that can `import jax`).
#   benches/peers/setup-jax.sh && cargo run --release -p mochi-benches
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
venv="$root/target/jax-venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet -r "$root/benches/peers/requirements.txt"
"$venv/bin/python" -c "import jax; print('jax', jax.__version__, 'in', '$venv')"
