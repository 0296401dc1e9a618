"""Python systems: registered from Python or by <plugin filename="kestrel-python-system">; a
wrench they apply gives the analytic motion; read-only post_update; errors. Run by ctest."""

import os
import shutil
import tempfile
import textwrap
import unittest

import kestrel

HERE = os.path.dirname(os.path.abspath(__file__))
FREE_BODY = os.path.join(HERE, "free_body.sdf")


class Push(kestrel.System):
    """4 N along x on the 2 kg box every step."""

    def __init__(self):
        self.calls = {"configure": 0, "pre_update": 0, "reset": 0}
        self.iterations = []

    def configure(self, entity, sdf, world):
        self.calls["configure"] += 1
        self.entity, self.sdf = entity, sdf
        self.models = world.models()

    def pre_update(self, info, world):
        self.calls["pre_update"] += 1
        self.iterations.append(info["iterations"])
        world.apply_wrench("box::link", [4.0, 0, 0])

    def reset(self, info, world):
        self.calls["reset"] += 1


def analytic_x(n, dt, a=2.0):
    """Semi-implicit Euler of x'' = a from rest: a dt² n(n+1)/2 (→ a t²/2)."""
    return a * dt * dt * n * (n + 1) / 2


class PythonSystems(unittest.TestCase):
    def test_a_wrench_from_a_python_system_gives_the_analytic_motion(self):
        push = Push()
        w = kestrel.World(FREE_BODY, systems=[push])
        self.assertEqual(push.calls["configure"], 1)
        self.assertEqual(push.sdf, "<plugin/>")
        self.assertEqual(push.models, ["box", "wheel"])
        x0 = w.model_pose("box")[0]
        w.step(1000)
        n, dt, t = 1000, w.step_size, 1.0
        x = w.model_pose("box")[0] - x0
        self.assertAlmostEqual(x, analytic_x(n, dt), delta=1e-12)
        self.assertAlmostEqual(x, 2.0 * t * t / 2, delta=2.0 * dt * t / 2 + 1e-12)
        self.assertEqual(push.iterations, list(range(1000)))
        self.assertIn("python:Push", [s["name"] for s in w.systems()])

    def test_systems_given_at_load_survive_reset_and_reproduce_the_run(self):
        push = Push()
        w = kestrel.World(FREE_BODY, systems=[push])
        w.step(300)
        first = w.model_pose("box")
        w.reset()
        self.assertEqual(push.calls["reset"], 1)
        w.step(300)
        self.assertEqual(list(w.model_pose("box")), list(first))

    def test_added_systems_run_from_the_next_step_and_reset_drops_them(self):
        w = kestrel.World(FREE_BODY)
        push = Push()
        w.add_system(push)
        self.assertEqual(push.calls["configure"], 1)
        w.step(10)
        self.assertEqual(push.calls["pre_update"], 10)
        w.reset()
        w.step(10)
        self.assertEqual(push.calls["pre_update"], 10)
        self.assertEqual(w.model_pose("box")[0], 1.0)  # nothing pushes any more

    def test_post_update_is_read_only(self):
        class Bad(kestrel.System):
            def post_update(self, info, world):
                world.model_pose("box")  # reading is fine
                world.apply_wrench("box::link", [1, 0, 0])

        w = kestrel.World(FREE_BODY, systems=[Bad()])
        with self.assertRaisesRegex(kestrel.Error, "read-only in post_update"):
            w.step()

    def test_a_system_cannot_step_its_own_world(self):
        class Stepper(kestrel.System):
            def pre_update(self, info, world):
                world.step()

        w = kestrel.World(FREE_BODY, systems=[Stepper()])
        with self.assertRaisesRegex(kestrel.Error, "while this world steps"):
            w.step()

    def test_an_exception_in_a_system_is_a_kestrel_error_with_its_message(self):
        class Broken(kestrel.System):
            def update(self, info, world):
                if info["iterations"] == 3:
                    raise ZeroDivisionError("the answer is not here")

        w = kestrel.World(FREE_BODY, systems=[Broken()])
        with self.assertRaisesRegex(kestrel.Error,
                                    r"Broken.update at t = 0.003 s.*ZeroDivisionError.*not here"):
            w.step(10)
        self.assertEqual(w.iterations, 3)

    def test_only_overridden_phases_are_called(self):
        class Plain:  # duck-typed, no base class
            def __init__(self):
                self.n = 0

            def post_update(self, info, world):
                self.n += 1

        p = Plain()
        w = kestrel.World(FREE_BODY, systems=[p])
        w.step(5)
        self.assertEqual(p.n, 5)


class PluginElement(unittest.TestCase):
    """<plugin filename="kestrel-python-system" name="module.Class">, the module found beside
    the world file (as gz-sim's PythonSystemLoader looks beside it and on its plugin path)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "pushers.py"), "w") as f:
            f.write(textwrap.dedent("""
                import kestrel

                class Push(kestrel.System):
                    def configure(self, entity, sdf, world):
                        import xml.etree.ElementTree as ET
                        self.force = float(ET.fromstring(sdf).find("force").text)
                        self.link = world.links("box")[0]

                    def pre_update(self, info, world):
                        world.apply_wrench("box::" + self.link, [self.force, 0, 0])
                """))

        with open(os.path.join(self.dir, "gz_style.py"), "w") as f:
            f.write(textwrap.dedent("""
                class Push:
                    def pre_update(self, info, world):
                        world.apply_wrench("box::link", [4.0, 0, 0])

                def get_system():
                    return Push()
                """))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def world(self, plugin):
        with open(FREE_BODY) as f:
            text = f.read().replace('<model name="box">', plugin + '\n<model name="box">')
        path = os.path.join(self.dir, "world.sdf")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_plugin_element_runs_a_python_system(self):
        path = self.world('<plugin filename="kestrel-python-system" name="pushers.Push">'
                          '<force>4</force></plugin>')
        w = kestrel.World(path)
        self.assertIn("kestrel::systems::Python", [s["name"] for s in w.systems()])
        w.step(1000)
        self.assertAlmostEqual(w.model_pose("box")[0] - 1.0, analytic_x(1000, 1e-3), delta=1e-12)

    def test_gz_sims_python_system_loader_element_runs_its_get_system(self):
        path = self.world('<plugin filename="gz-sim-python-system-loader-system" '
                          'name="gz::sim::systems::PythonSystemLoader">'
                          '<module_name>gz_style</module_name></plugin>')
        w = kestrel.World(path)
        w.step(1000)
        self.assertAlmostEqual(w.model_pose("box")[0] - 1.0, analytic_x(1000, 1e-3), delta=1e-12)
        path = self.world('<plugin filename="gz-sim-python-system-loader-system" '
                          'name="gz::sim::systems::PythonSystemLoader"/>')
        with self.assertRaisesRegex(kestrel.Error, r"world.sdf:\d+.*<module_name> is required"):
            kestrel.World(path)

    def test_a_bad_plugin_name_names_the_file_and_line(self):
        for name, message in [("pushers", "is not MODULE.CLASS"),
                              ("pushers.Pull", "has no class 'Pull'"),
                              ("nosuchmodule.X", "No module named 'nosuchmodule'")]:
            path = self.world(f'<plugin filename="kestrel-python-system" name="{name}"/>')
            with self.assertRaisesRegex(kestrel.Error, r"world.sdf:\d+.*" + message):
                kestrel.World(path)


if __name__ == "__main__":
    unittest.main()
