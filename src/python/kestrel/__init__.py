"""Kestrel, the robotics simulator, as a Python module (src/python/README.md).

    import kestrel
    w = kestrel.World("worlds/x3_mission.sdf", seed=0)
    w.step(1000)                 # 1 s of sim time, as fast as possible
    w.model_pose("x3")           # (7,) x y z [m] qw qx qy qz, world ENU

Errors: kestrel.Error (a RuntimeError) with Kestrel's message (file:line where it has one);
KeyError for a name the world does not hold, ValueError for a bad shape or value,
FileNotFoundError for a world file that does not exist.
"""

import os as _os

import numpy as _np

from ._kestrel import Error, World, _VecEnv

__all__ = ["Error", "World", "System", "VecEnv", "Box", "X3_HOVER_WORLD"]

#: The world of the "x3_hover" task: the X3 of worlds/x3_mission.sdf flown on rotor speeds.
X3_HOVER_WORLD = _os.path.join(_os.path.dirname(__file__), "worlds", "x3_hover.sdf")


class System:
    """Base class of a system written in Python (gz-sim's Python systems' methods).

    Override any of the methods below; those left as they are here are not called at all.
    `world` is the kestrel.World the system runs in; `info` a dict: sim_time [s] (at the start
    of the step), dt [s] (0 while paused), iterations (steps done before this one), paused,
    real_time [s]. In post_update the world is read-only: commands raise ValueError.
    Register one with World(path, systems=[obj]) (kept across reset), World.add_system(obj)
    (dropped by reset), or <plugin filename="kestrel-python-system" name="module.Class">.
    """

    def configure(self, entity, sdf, world):
        """Once, before the first step. sdf: the <plugin> element's XML (<plugin/> from Python)."""

    def pre_update(self, info, world):
        """Every step before physics: commands (wrenches, motor speeds, poses)."""

    def update(self, info, world):
        """Every step after pre_update, with physics (priority 0: after Physics)."""

    def post_update(self, info, world):
        """Every step (paused ones too) after physics and sensors; read-only."""

    def reset(self, info, world):
        """After the world is reset to its initial state."""


class Box:
    """A gymnasium-style Box space description (no gymnasium needed): low, high, shape, dtype."""

    def __init__(self, low, high, shape, dtype=_np.float64):
        self.shape = tuple(shape)
        self.dtype = _np.dtype(dtype)
        self.low = _np.broadcast_to(_np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = _np.broadcast_to(_np.asarray(high, dtype=self.dtype), self.shape).copy()
        self._rng = _np.random.default_rng(0)

    def seed(self, seed=None):
        self._rng = _np.random.default_rng(seed)

    def sample(self):
        low = _np.where(_np.isfinite(self.low), self.low, -1.0)
        high = _np.where(_np.isfinite(self.high), self.high, 1.0)
        return self._rng.uniform(low, high).astype(self.dtype)

    def contains(self, x):
        x = _np.asarray(x)
        return x.shape == self.shape and bool(_np.all(x >= self.low) and _np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class VecEnv:
    """N copies of one world stepped in parallel C++ threads, with a task (gymnasium's vector
    API by duck typing: reset(seed) -> obs, info; step(actions) -> obs, reward, terminated,
    truncated, info). World i is seeded seed + i. An env whose episode ends is reset at once:
    its row of obs is then the new episode's first observation and info["final_observation"]
    holds the last one (rows where info["_final_observation"] is True).

    task "x3_hover" (the default; src/python/README.md): fly the X3 to a random target.
    task None: no observations or rewards (obs shape (N, 0)); step(None) runs the worlds' own
    systems and missions.
    """

    def __init__(self, path=X3_HOVER_WORLD, num_envs=1, seed=0, task="x3_hover", frame_skip=10,
                 max_episode_steps=500, threads=0):
        self._env = _VecEnv(_os.fspath(path), int(num_envs), int(seed), task, int(frame_skip),
                            int(max_episode_steps), int(threads))
        self.num_envs = self._env.num_envs
        self.task = task
        self.frame_skip = frame_skip
        self.max_episode_steps = max_episode_steps
        n, no, na = self.num_envs, self._env.obs_dim, self._env.act_dim
        self.single_observation_space = Box(-_np.inf, _np.inf, (no,))
        self.single_action_space = Box(0.0, self._env.max_rotor_speed, (na,))
        self.observation_space = Box(-_np.inf, _np.inf, (n, no))
        self.action_space = Box(0.0, self._env.max_rotor_speed, (n, na))

    @property
    def worlds(self):
        """The N kestrel.World objects (read them; do not step them yourself)."""
        return [self._env.world(i) for i in range(self.num_envs)]

    def reset(self, seed=None, options=None):
        del options
        return self._env.reset(seed), {}

    def step(self, actions):
        obs, reward, terminated, truncated, final_obs = self._env.step(actions)
        done = terminated | truncated
        info = {"final_observation": final_obs, "_final_observation": done}
        return obs, reward, terminated, truncated, info

    def close(self):
        self._env = None
