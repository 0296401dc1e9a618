"""kestrel.VecEnv: world i is a lone World with seed i, auto-reset at truncation, the
gymnasium-style API, errors. Run by ctest (src/python/CMakeLists.txt)."""

import math
import os
import unittest

import numpy as np

import kestrel

SOURCE = os.environ.get("KESTREL_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", "..", ".."))
X3_MISSION = os.path.join(SOURCE, "worlds", "x3_mission.sdf")
HOVER = 660.0  # about the X3's hover speed [rad/s]: sqrt(1.52 kg g / (4 · 8.54858e-06))


def state(w):
    return np.concatenate([w.model_pose("x3"), w.model_velocity("x3"), w.rotor_speeds("x3")])


class VecEnvIsNWorlds(unittest.TestCase):
    def test_world_i_equals_a_lone_world_with_seed_i(self):
        n, skip, steps = 4, 10, 40
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, n, seed=0, frame_skip=skip)
        obs, info = env.reset()
        self.assertEqual(obs.shape, (n, 13))
        self.assertEqual(info, {})
        actions = np.array([[HOVER + 10 * i + k for k in range(4)] for i in range(n)])
        for _ in range(steps):
            obs, reward, terminated, truncated, info = env.step(actions)
            self.assertFalse(terminated.any() or truncated.any())
        for i in range(n):
            lone = kestrel.World(kestrel.X3_HOVER_WORLD, seed=i)
            for _ in range(steps):
                lone.set_motor_speeds("x3", actions[i])
                lone.step(skip)
            np.testing.assert_array_equal(state(env.worlds[i]), state(lone), f"world {i}")
            self.assertEqual(env.worlds[i].seed, i)
            # The observation: target - position, orientation, velocities.
            np.testing.assert_array_equal(obs[i, 3:7], lone.model_pose("x3")[3:])
            np.testing.assert_array_equal(obs[i, 7:], lone.model_velocity("x3"))

    def test_results_do_not_depend_on_the_thread_count(self):
        runs = []
        for threads in (1, 3):
            env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 3, seed=5, threads=threads)
            obs0, _ = env.reset()
            out = [obs0]
            for k in range(20):
                obs, reward, *_ = env.step(np.full((3, 4), HOVER + k))
                out += [obs, reward[:, None]]
            runs.append(np.concatenate(out, axis=1))
        np.testing.assert_array_equal(runs[0], runs[1])

    def test_reset_with_a_seed_draws_new_targets_reproducibly(self):
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 2, seed=0)
        a, _ = env.reset(seed=11)
        b, _ = env.reset(seed=11)
        c, _ = env.reset(seed=12)
        np.testing.assert_array_equal(a, b)
        self.assertFalse(np.array_equal(a, c))
        self.assertEqual([w.seed for w in env.worlds], [12, 13])
        # Targets in x, y [-2, 2], z [1, 3] m above a start at (0, 0, 0.056).
        target = a[:, :3] + np.array([0, 0, 0.056])
        self.assertTrue(np.all(np.abs(target[:, :2]) <= 2 + 1e-9))
        self.assertTrue(np.all((target[:, 2] >= 1 - 1e-9) & (target[:, 2] <= 3 + 1e-9)))


class AutoReset(unittest.TestCase):
    def test_truncation_resets_the_env_and_reports_the_final_observation(self):
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 2, seed=0, frame_skip=25,
                             max_episode_steps=4)
        env.reset()
        act = np.full((2, 4), 700.0)
        for k in range(3):
            obs, reward, terminated, truncated, info = env.step(act)
            self.assertFalse(truncated.any())
            self.assertFalse(info["_final_observation"].any())
        self.assertEqual(env.worlds[0].iterations, 75)
        obs, reward, terminated, truncated, info = env.step(act)
        np.testing.assert_array_equal(truncated, [True, True])
        np.testing.assert_array_equal(terminated, [False, False])
        np.testing.assert_array_equal(info["_final_observation"], [True, True])
        # Reset at once: the world is back at its start, the final observation is 100 steps in.
        self.assertEqual([w.iterations for w in env.worlds], [0, 0])
        np.testing.assert_array_equal(obs[:, 3:], np.tile([1, 0, 0, 0] + [0] * 6, (2, 1)))
        self.assertGreater(info["final_observation"][0, 9], 0)  # climbing when it ended

    def test_termination_when_flipped_with_its_penalty(self):
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 1, seed=0)
        env.reset()
        w = env.worlds[0]
        w.set_model_pose("x3", [0, 0, 2, 0, 1, 0, 0])  # upside down (180° about x)
        obs, reward, terminated, truncated, info = env.step(np.zeros((1, 4)))
        self.assertTrue(terminated[0])
        self.assertLess(reward[0], -100)
        self.assertEqual(w.iterations, 0)

    def test_reward_is_minus_distance_speed_and_spin(self):
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 1, seed=0, frame_skip=1)
        obs, _ = env.reset()
        obs, reward, *_ = env.step(np.zeros((1, 4)))  # on the ground, at rest
        d = np.linalg.norm(obs[0, :3])
        v = np.linalg.norm(obs[0, 7:10])
        w = np.linalg.norm(obs[0, 10:13])
        self.assertAlmostEqual(reward[0], -d - 0.1 * v - 0.05 * w, delta=1e-12)


class NoTask(unittest.TestCase):
    def test_step_none_runs_the_worlds_own_systems(self):
        env = kestrel.VecEnv(X3_MISSION, 2, seed=0, task=None, frame_skip=100)
        obs, _ = env.reset()
        self.assertEqual(obs.shape, (2, 0))
        for _ in range(25):
            obs, reward, terminated, truncated, info = env.step(None)
        self.assertEqual(obs.shape, (2, 0))
        np.testing.assert_array_equal(reward, [0, 0])
        for w in env.worlds:
            self.assertAlmostEqual(w.time, 2.5, places=12)
            self.assertGreater(w.model_pose("x3")[2], 0.3)  # the mission took off


class Api(unittest.TestCase):
    def test_spaces(self):
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 3)
        self.assertEqual(env.num_envs, 3)
        self.assertEqual(env.action_space.shape, (3, 4))
        self.assertEqual(env.single_action_space.shape, (4,))
        self.assertEqual(env.single_observation_space.shape, (13,))
        self.assertTrue(np.all(env.single_action_space.high == 800))
        a = env.action_space.sample()
        self.assertTrue(env.action_space.contains(a))
        env.step(a)
        env.step(None)  # no new command: the rotors keep the last one

    def test_errors(self):
        env = kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 2)
        with self.assertRaisesRegex(ValueError, r"shape \(2, 4\).*found \(3, 4\)"):
            env.step(np.zeros((3, 4)))
        with self.assertRaisesRegex(ValueError, r"action \[1, 2\] is nan"):
            env.step(np.array([[0, 0, 0, 0], [0, 0, math.nan, 0]]))
        self.assertEqual(env.worlds[0].iterations, 0)  # nothing moved
        with self.assertRaisesRegex(ValueError, "unknown task 'fly'"):
            kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 1, task="fly")
        with self.assertRaisesRegex(ValueError, "num_envs must be at least 1"):
            kestrel.VecEnv(kestrel.X3_HOVER_WORLD, 0)
        with self.assertRaisesRegex(KeyError, "no model 'x3'"):
            kestrel.VecEnv(os.path.join(os.path.dirname(__file__), "free_body.sdf"), 1)
        with self.assertRaises(FileNotFoundError):
            kestrel.VecEnv("/nonexistent.sdf", 1)


if __name__ == "__main__":
    unittest.main()
