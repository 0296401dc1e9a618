"""kestrel.World against `kestrel run`, analytic motion, reset, commands and every error path.

Run by ctest (src/python/CMakeLists.txt) with PYTHONPATH=build/python, KESTREL_BIN (the kestrel
binary) and KESTREL_SOURCE_DIR set.
"""

import csv
import math
import os
import subprocess
import tempfile
import unittest

import numpy as np

import kestrel

SOURCE = os.environ.get("KESTREL_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
X3_MISSION = os.path.join(SOURCE, "worlds", "x3_mission.sdf")
FREE_BODY = os.path.join(HERE, "free_body.sdf")

BALL = """<sdf version="1.9"><model name="ball"><pose>0 5 1 0 0 0</pose>
  <link name="link"><inertial><mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy>
  <izz>0.004</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
  <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
  </link></model></sdf>"""


class MatchesKestrelRun(unittest.TestCase):
    def test_every_truth_csv_row_is_reached_bit_for_bit(self):
        """The X3 mission (wind, motor models, controller, mission) stepped from Python gives
        exactly the doubles `kestrel run --truth-csv` writes: same world, seed and steps."""
        steps, seed = 2000, 3
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "truth.csv")
            run = subprocess.run(
                [os.environ["KESTREL_BIN"], "run", X3_MISSION, "--iterations", str(steps),
                 "--seed", str(seed), "--no-transport", "--quiet", "--truth-csv", path],
                capture_output=True, text=True, check=False)
            # Exit 1: the mission is not over after 2 s; the file is written all the same.
            self.assertIn(run.returncode, (0, 1), run.stderr)
            with open(path, newline="") as f:
                rows = [r for r in csv.DictReader(f) if r["model"] == "x3"]
        self.assertEqual(len(rows), steps // 10)
        w = kestrel.World(X3_MISSION, seed=seed)
        for row in rows:
            t = float(row["sim_time"])
            w.step(round(t / w.step_size) - w.iterations)
            self.assertEqual(w.time, t)
            pose, vel, rotors = w.model_pose("x3"), w.model_velocity("x3"), w.rotor_speeds("x3")
            for k, name in enumerate(["x", "y", "z", "qw", "qx", "qy", "qz"]):
                self.assertEqual(pose[k], float(row[name]), f"{name} at t = {t}")
            for k, name in enumerate(["vx", "vy", "vz", "wx", "wy", "wz"]):
                self.assertEqual(vel[k], float(row[name]), f"{name} at t = {t}")
            for k in range(4):
                self.assertEqual(rotors[k], float(row[f"rotor_{k}"]), f"rotor_{k} at t = {t}")
        self.assertGreater(w.model_pose("x3")[2], 0.15)  # it took off: the rows are not trivial


class ResetAndSeeds(unittest.TestCase):
    @staticmethod
    def trajectory(w, steps=600, every=50):
        out = []
        for _ in range(steps // every):
            w.step(every)
            out.append(np.concatenate([w.model_pose("x3"), w.model_velocity("x3")]))
        return np.array(out)

    def test_reset_reproduces_a_fresh_run_bit_for_bit(self):
        w = kestrel.World(X3_MISSION, seed=1)
        first = self.trajectory(w, 1200)
        w.reset()
        self.assertEqual(w.time, 0.0)
        self.assertEqual(w.iterations, 0)
        np.testing.assert_array_equal(self.trajectory(w, 1200), first)
        fresh = kestrel.World(X3_MISSION, seed=1)
        np.testing.assert_array_equal(self.trajectory(fresh, 1200), first)

    def test_reset_with_a_seed_equals_a_world_loaded_with_it(self):
        w = kestrel.World(X3_MISSION, seed=1)
        self.trajectory(w, 300)
        w.reset(seed=7)
        self.assertEqual(w.seed, 7)
        self.assertEqual(w.iterations, 0)
        np.testing.assert_array_equal(self.trajectory(w),
                                      self.trajectory(kestrel.World(X3_MISSION, seed=7)))
        w.reset()
        self.assertEqual(w.seed, 1)  # back to the seed it was loaded with

    def test_paused_steps_do_not_advance_time(self):
        w = kestrel.World(FREE_BODY)
        w.paused = True
        w.step(10)
        self.assertEqual((w.iterations, w.time), (0, 0.0))
        w.paused = False
        w.step(10)
        self.assertEqual(w.iterations, 10)
        self.assertAlmostEqual(w.time, 0.01, places=15)

    def test_paced_steps_take_their_sim_time_of_wall_time(self):
        import time
        w = kestrel.World(FREE_BODY, rtf=1.0)
        t0 = time.monotonic()
        w.step(100)
        self.assertGreaterEqual(time.monotonic() - t0, 0.099)


class AnalyticMotion(unittest.TestCase):
    def test_a_force_gives_x_equal_f_t2_over_2m(self):
        """A free 2 kg box without gravity pushed by 4 N along x: x = F t²/2m, to the
        integrator's first order (semi-implicit Euler: exactly a dt² N(N+1)/2)."""
        w = kestrel.World(FREE_BODY)
        F, m, n, dt = 4.0, 2.0, 1000, w.step_size
        x0 = w.model_pose("box")[0]
        for _ in range(n):
            w.apply_wrench("box::link", [F, 0, 0])
            w.step()
        a, t = F / m, n * dt
        x = w.model_pose("box")[0] - x0
        self.assertAlmostEqual(x, a * dt * dt * n * (n + 1) / 2, delta=1e-12)
        self.assertAlmostEqual(x, a * t * t / 2, delta=a * dt * t / 2 + 1e-12)
        self.assertAlmostEqual(w.model_velocity("box")[0], a * t, delta=1e-12)
        np.testing.assert_allclose(w.model_pose("box")[1:3], [2, 3], atol=1e-12)

    def test_a_wrench_lasts_one_step(self):
        w = kestrel.World(FREE_BODY)
        w.apply_wrench("box::link", [2, 0, 0])
        w.step(10)
        self.assertAlmostEqual(w.model_velocity("box")[0], 2 / 2 * w.step_size, delta=1e-15)

    def test_a_torque_gives_omega_equal_tau_t_over_i(self):
        w = kestrel.World(FREE_BODY)
        for _ in range(500):
            w.apply_wrench("box::link", [0, 0, 0], [0, 0, 0.3])  # Izz = 0.3 kg m²
            w.step()
        self.assertAlmostEqual(w.model_velocity("box")[5], 0.5, delta=1e-9)

    def test_a_joint_velocity_command_turns_the_joint(self):
        w = kestrel.World(FREE_BODY)
        self.assertEqual(list(w.joint_positions("wheel")), ["fix", "axle"])
        w.set_joint_velocity_cmd("wheel", "axle", [2.0])
        w.step(1000)
        self.assertAlmostEqual(w.joint_positions("wheel")["axle"][0], 2.0, delta=1e-6)
        w.set_joint_velocity_cmd("wheel", "axle", [])  # released: it spins on freely
        w.step(100)
        self.assertAlmostEqual(w.joint_positions("wheel")["axle"][0], 2.2, delta=1e-3)

    def test_set_model_pose_teleports(self):
        w = kestrel.World(FREE_BODY)
        q = [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]
        w.set_model_pose("box", [5, 6, 7] + q)
        w.step()
        np.testing.assert_allclose(w.model_pose("box"), [5, 6, 7] + q, atol=1e-12)

    def test_motor_speeds_lift_the_x3(self):
        w = kestrel.World(kestrel.X3_HOVER_WORLD)
        w.set_motor_speeds("x3", np.full(4, 750.0))
        w.step(1000)
        self.assertGreater(w.model_pose("x3")[2], 0.5)
        np.testing.assert_allclose(w.rotor_speeds("x3"), 750.0, rtol=1e-3)


class Queries(unittest.TestCase):
    def test_models_links_systems(self):
        w = kestrel.World(X3_MISSION)
        self.assertEqual(w.name, "x3_mission")
        self.assertEqual(w.models(), ["ground_plane", "x3"])
        self.assertEqual(w.links("x3"), ["base_link", "rotor_0", "rotor_1", "rotor_2", "rotor_3"])
        names = [s["name"] for s in w.systems()]
        self.assertIn("kestrel::systems::Physics", names)
        self.assertFalse(any("Transport" in n for n in names))  # no transport at all
        self.assertEqual(sum("MulticopterMotorModel" in n for n in names), 4)

    def test_sensors_are_dicts_of_arrays(self):
        w = kestrel.World(X3_MISSION)
        w.step(500)  # settled on the ground
        imu = w.sensor("x3::base_link::imu_sensor")
        self.assertEqual(imu["type"], "imu")
        self.assertEqual(imu["linear_acceleration"].shape, (3,))
        np.testing.assert_allclose(imu["linear_acceleration"], [0, 0, 9.8], atol=0.05)
        self.assertEqual(imu["sequence"], 125)  # 250 Hz for 0.5 s
        gnss = w.sensor("x3_mission::x3::base_link::navsat")  # with the world's name too
        self.assertAlmostEqual(gnss["latitude_deg"], 47.397742, places=5)

    def test_images_are_h_w_c_arrays_and_ranges_hit_the_wall(self):
        """A camera, a depth camera and a lidar at the origin facing a red wall whose face is
        at x = 3 m (test/worlds/viewer_sensors.sdf)."""
        w = kestrel.World(os.path.join(SOURCE, "test", "worlds", "viewer_sensors.sdf"))
        w.step(100)
        cam = w.sensor("rig::link::camera")
        self.assertEqual(cam["image"].shape, (48, 64, 3))
        self.assertEqual(cam["image"].dtype, np.uint8)
        r, g, b = (int(v) for v in cam["image"][24, 32])
        self.assertGreater(r, 2 * max(g, b, 1))  # the wall is red
        depth = w.sensor("rig::link::depth")
        self.assertEqual(depth["image"].shape, (12, 16, 1))
        self.assertEqual(depth["image"].dtype, np.float32)
        np.testing.assert_allclose(depth["image"], 3.0, rtol=1e-5)  # planar depth
        self.assertEqual(depth["points"].shape, (12 * 16, 3))
        lidar = w.sensor("rig::link::lidar")
        self.assertEqual(lidar["ranges"].shape, (3, 11))
        theta = np.linspace(-0.5, 0.5, 11)[None, :]
        phi = np.linspace(-0.2, 0.2, 3)[:, None]
        np.testing.assert_allclose(lidar["ranges"], 3.0 / (np.cos(theta) * np.cos(phi)),
                                   rtol=1e-6)

    def test_spawn_and_remove(self):
        w = kestrel.World(FREE_BODY)
        self.assertEqual(w.spawn(BALL), "ball")
        self.assertIn("ball", w.models())
        w.step(100)
        self.assertAlmostEqual(w.model_pose("ball")[1], 5.0, places=12)
        with self.assertRaisesRegex(kestrel.Error, "ball"):
            w.spawn(BALL)  # the name is taken
        w.remove("ball")
        w.step()
        self.assertNotIn("ball", w.models())
        w.spawn(BALL.replace("0 5 1 0 0 0", "0 6 1 0 0 0"))  # the name is free again
        w.step()
        self.assertAlmostEqual(w.model_pose("ball")[1], 6.0, places=12)  # the new text's pose
        w.reset()
        self.assertEqual(w.models(), ["box", "wheel"])

    def test_many_distinct_spawns(self):
        """More distinct texts than the spool keeps (128): each spawns what it says."""
        w = kestrel.World(FREE_BODY)
        for i in range(140):
            name = w.spawn(BALL.replace("name=\"ball\"", f"name=\"ball{i}\"")
                           .replace("0 5 1 0 0 0", f"{i} 5 1 0 0 0"))
            self.assertEqual(name, f"ball{i}")
        w.step()
        self.assertEqual(len(w.models()), 142)
        self.assertAlmostEqual(w.model_pose("ball139")[0], 139.0, places=12)


class Errors(unittest.TestCase):
    def setUp(self):
        self.w = kestrel.World(FREE_BODY)

    def test_error_is_a_runtime_error(self):
        self.assertTrue(issubclass(kestrel.Error, RuntimeError))

    def test_bad_paths(self):
        with self.assertRaisesRegex(FileNotFoundError, "nope.sdf"):
            kestrel.World("/nonexistent/nope.sdf")
        with self.assertRaisesRegex(FileNotFoundError, "not a regular file"):
            kestrel.World(HERE)

    def test_a_bad_world_names_its_file_and_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".sdf", delete=False) as f:
            with open(FREE_BODY) as src:
                f.write(src.read().replace("<mass>2</mass>", "<mas>2</mas>"))
        try:
            with self.assertRaisesRegex(kestrel.Error, os.path.basename(f.name) + r":\d+.*mass"):
                kestrel.World(f.name)
        finally:
            os.unlink(f.name)

    def test_bad_names(self):
        w = self.w
        with self.assertRaisesRegex(KeyError, "no model 'nope'.*'box', 'wheel'"):
            w.model_pose("nope")
        with self.assertRaisesRegex(KeyError, "expected MODEL::LINK"):
            w.apply_wrench("box", [1, 0, 0])
        with self.assertRaisesRegex(KeyError, "no link 'nolink' in model 'box'.*'link'"):
            w.apply_wrench("box::nolink", [1, 0, 0])
        with self.assertRaisesRegex(KeyError, "no joint 'spin'.*'axle'"):
            w.set_joint_velocity_cmd("wheel", "spin", [1])
        with self.assertRaisesRegex(KeyError, "no sensor 'x'"):
            w.sensor("x")
        with self.assertRaisesRegex(KeyError, "no model"):
            w.remove("nope")
        with self.assertRaises(KeyError):
            w.links("nope")

    def test_bad_shapes_and_values(self):
        w = self.w
        with self.assertRaisesRegex(ValueError, r"expected shape \(7,\), found \(3,\)"):
            w.set_model_pose("box", [1, 2, 3])
        with self.assertRaisesRegex(ValueError, r"expected shape \(3,\), found \(2, 3\)"):
            w.apply_wrench("box::link", np.zeros((2, 3)))
        with self.assertRaisesRegex(ValueError, "element 1 is nan"):
            w.apply_wrench("box::link", [0, math.nan, 0])
        with self.assertRaisesRegex(ValueError, "orientation .* is zero"):
            w.set_model_pose("box", [0, 0, 0, 0, 0, 0, 0])
        with self.assertRaisesRegex(ValueError, "outside the world"):
            w.set_model_pose("box", [1e10, 0, 0, 1, 0, 0, 0])
        with self.assertRaisesRegex(ValueError, "2 values for a joint with 1 axes"):
            w.set_joint_velocity_cmd("wheel", "axle", [1, 2])
        with self.assertRaisesRegex(ValueError, "no motor model"):
            w.set_motor_speeds("box", [1.0])
        with self.assertRaisesRegex(ValueError, "rtf must be"):
            kestrel.World(FREE_BODY, rtf=-1)
        x3 = kestrel.World(kestrel.X3_HOVER_WORLD)
        with self.assertRaisesRegex(ValueError, "3 speeds for 4 motors"):
            x3.set_motor_speeds("x3", [1, 2, 3])
        with self.assertRaisesRegex(ValueError, "element 2 is inf"):
            x3.set_motor_speeds("x3", [1, 2, math.inf, 4])
        with self.assertRaises(TypeError):
            w.set_model_pose("box", "not numbers")

    def test_bad_spawns(self):
        with self.assertRaisesRegex(kestrel.Error, "spawn"):
            self.w.spawn("<sdf version='1.9'><model name='m'><link name='l'><inertial>"
                         "<mass>-1</mass></inertial></link></model></sdf>")
        self.assertEqual(self.w.models(), ["box", "wheel"])  # nothing was added
        with self.assertRaises(kestrel.Error):
            self.w.spawn("not sdf at all")
        self.assertEqual(self.w.models(), ["box", "wheel"])


if __name__ == "__main__":
    unittest.main()
