#!/usr/bin/env python3
"""The Python module's costs (docs/performance.md, "Python"):

1. per-step overhead of kestrel.World.step() against the C++ step: N calls of step() against
   one step(N), which runs the same N steps in one C++ loop, alternated; (t_calls - t_loop) / N;
2. env-steps/s of kestrel.VecEnv (task x3_hover, --frame-skip physics steps per env step) with 1, 2, 4, 8
   environments, as ratios to one environment's, measured in the same run, and the cores the
   process used meanwhile (its CPU time / wall time: on a loaded machine the ratio cannot
   exceed what the scheduler gives).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--repeats 5]
        [--frame-skip 10] [--env-steps 400] [--rounds 20] [--steps 2000]
"""

import argparse
import resource
import statistics
import time

import numpy as np

import kestrel


def step_overhead(rounds, steps):
    """Per-step seconds of `steps` calls of step() and of one step(steps), alternated `rounds`
    times on one world (the X3 resting on the ground)."""
    w = kestrel.World(kestrel.X3_HOVER_WORLD)
    w.step(100)  # past the first steps' one-time work
    calls, loops = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            w.step()
        calls.append((time.perf_counter() - t0) / steps)
        t0 = time.perf_counter()
        w.step(steps)
        loops.append((time.perf_counter() - t0) / steps)
    return calls, loops


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
    return r.ru_utime + r.ru_stime


def env_steps_per_s(n, env_steps, frame_skip):
    """(env-steps/s of wall time, cores the process used meanwhile: CPU time / wall time)."""
    env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, n, seed=0, frame_skip=frame_skip,
                         max_episode_steps=0)
    env.reset()
    act = np.full((n, 4), 660.0)
    env.step(act)
    c0, t0 = cpu_seconds(), time.perf_counter()
    for _ in range(env_steps):
        env.step(act)
    wall = time.perf_counter() - t0
    return n * env_steps / wall, (cpu_seconds() - c0) / wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20, help="alternated overhead rounds")
    ap.add_argument("--steps", type=int, default=2000, help="physics steps per overhead round")
    ap.add_argument("--env-steps", type=int, default=400, help="VecEnv steps per sample")
    ap.add_argument("--frame-skip", type=int, default=10, help="physics steps per env step")
    a = ap.parse_args()

    calls, loops = step_overhead(a.rounds, a.steps)
    pairs = [c - s for c, s in zip(calls, loops)]
    fastest = (min(calls) - min(loops)) * 1e6
    print(f"World.step(): C++ step (one step(N)) {min(loops) * 1e6:.2f} us (fastest round), "
          f"step() per call {min(calls) * 1e6:.2f} us: overhead {fastest:.2f} us (fastest "
          f"rounds), {statistics.median(pairs) * 1e6:.2f} us (median of {a.rounds} alternated "
          f"pairs of {a.steps} steps)")

    sizes = [1, 2, 4, 8]
    rates = {n: [] for n in sizes}
    cores = {n: [] for n in sizes}
    for _ in range(a.repeats):  # alternated, so that load changes hit every size alike
        for n in sizes:
            r, c = env_steps_per_s(n, a.env_steps, a.frame_skip)
            rates[n].append(r)
            cores[n].append(c)
    base = statistics.median(rates[1])
    print("| envs | env-steps/s (median) | ratio to 1 env | min - max ratio | cores used |")
    print("|---:|---:|---:|---|---:|")
    for n in sizes:
        r = statistics.median(rates[n])
        print(f"| {n} | {r:.0f} | {r / base:.2f} | {min(rates[n]) / base:.2f} - "
              f"{max(rates[n]) / base:.2f} | {statistics.median(cores[n]):.2f} |")


if __name__ == "__main__":
    main()
