// The `kestrel._kestrel` extension (src/python/README.md): the only file that includes
// pybind11. World and VecEnv are bound here; Python systems run through PySystem, which takes
// the GIL around each call (the step itself runs with the GIL released).
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/sensors.h"
#include "kestrel/core/log.h"
#include "python/vec_env.h"
#include "python/world.h"

namespace py = pybind11;

namespace kestrel::python {
namespace {

namespace c = kestrel::components;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// ---- conversions -------------------------------------------------------------------------------

// "(2, 3)" for a 2 × 3 array, "(7,)" for a vector.
std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

template <std::size_t N>
std::array<double, N> fixed(const Array& a, const char* what) {
  if (a.ndim() != 1 || a.shape(0) != static_cast<py::ssize_t>(N)) {
    throw ArgumentError(fmt::format("{}: expected shape ({},), found {}", what, N, shape_of(a)));
  }
  std::array<double, N> out;
  std::copy(a.data(), a.data() + N, out.begin());
  return out;
}

std::vector<double> vector_of(const Array& a, const char* what) {
  if (a.ndim() != 1) {
    throw ArgumentError(fmt::format("{}: expected shape (n,), found {}", what, shape_of(a)));
  }
  return {a.data(), a.data() + a.shape(0)};
}

template <std::size_t N>
py::array_t<double> array(const std::array<double, N>& v) {
  return py::array_t<double>(N, v.data());
}
py::array_t<double> array(const std::vector<double>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}
py::array_t<double> array(const Vector3d& v) {
  const double d[3] = {v.X(), v.Y(), v.Z()};
  return py::array_t<double>(3, d);
}
py::array_t<double> array(const Quaterniond& q) {
  const double d[4] = {q.W(), q.X(), q.Y(), q.Z()};
  return py::array_t<double>(4, d);
}

// An image as (H, W, C) (C = 1 for one channel), of its pixel type; empty: None.
py::object image(const c::Image& im) {
  if (im.data.empty()) return py::none();
  const auto h = static_cast<py::ssize_t>(im.height), w = static_cast<py::ssize_t>(im.width);
  auto make = [&](auto tag, py::ssize_t channels) -> py::object {
    using T = decltype(tag);
    py::array_t<T> a({h, w, channels});
    std::memcpy(a.mutable_data(), im.data.data(), im.data.size());
    return a;
  };
  switch (im.format) {
    case c::PixelFormat::kRgbInt8:
      return make(std::uint8_t{}, 3);
    case c::PixelFormat::kLInt8:
      return make(std::uint8_t{}, 1);
    case c::PixelFormat::kLInt16:
      return make(std::uint16_t{}, 1);
    case c::PixelFormat::kRFloat32:
      return make(float{}, 1);
  }
  return py::none();
}

double seconds(Duration d) { return to_seconds(d); }

// What a sensor's reading holds (components/sensors.h, camera.h), as a dict.
py::dict sensor_dict(const World& w, ecs::Entity e) {
  const auto& r = w.registry();
  py::dict d;
  d["type"] = r.get<c::Sensor>(e).type;
  auto head = [&](const auto& reading) {
    d["stamp"] = seconds(reading.stamp);
    d["sequence"] = reading.sequence;
  };
  if (const auto* s = r.try_get<c::ImuReading>(e)) {
    head(*s);
    d["orientation"] = array(s->orientation);
    d["angular_velocity"] = array(s->angular_velocity);
    d["linear_acceleration"] = array(s->linear_acceleration);
  } else if (const auto* s = r.try_get<c::MagnetometerReading>(e)) {
    head(*s);
    d["field"] = array(s->field);
  } else if (const auto* s = r.try_get<c::AirPressureReading>(e)) {
    head(*s);
    d["pressure"] = s->pressure;
    d["variance"] = s->variance;
  } else if (const auto* s = r.try_get<c::AltimeterReading>(e)) {
    head(*s);
    d["vertical_position"] = s->vertical_position;
    d["vertical_velocity"] = s->vertical_velocity;
    d["vertical_reference"] = s->vertical_reference;
  } else if (const auto* s = r.try_get<c::NavSatReading>(e)) {
    head(*s);
    d["fix"] = s->fix;
    d["latitude_deg"] = s->latitude_deg;
    d["longitude_deg"] = s->longitude_deg;
    d["altitude"] = s->altitude;
    d["velocity_enu"] = array(s->velocity_enu);
  } else if (const auto* s = r.try_get<c::AirSpeedReading>(e)) {
    head(*s);
    d["diff_pressure"] = s->diff_pressure;
    d["temperature"] = s->temperature;
    d["density"] = s->density;
  } else if (const auto* s = r.try_get<c::ForceTorqueReading>(e)) {
    head(*s);
    d["force"] = array(s->force);
    d["torque"] = array(s->torque);
  } else if (const auto* s = r.try_get<c::CameraReading>(e)) {
    head(*s);
    d["image"] = image(s->image);
    d["depth"] = image(s->depth);
    d["labels"] = image(s->labels);
    if (!s->points.empty()) {
      py::array_t<float> p({static_cast<py::ssize_t>(s->points.size() / 3), py::ssize_t{3}});
      std::memcpy(p.mutable_data(), s->points.data(), s->points.size() * sizeof(float));
      d["points"] = p;
    }
  } else if (const auto* s = r.try_get<c::LidarReading>(e)) {
    head(*s);
    const py::ssize_t rings = s->vertical_count, count = s->count;
    py::array_t<double> ranges({rings, count});
    if (s->ranges.size() == static_cast<std::size_t>(rings * count)) {
      std::copy(s->ranges.begin(), s->ranges.end(), ranges.mutable_data());
      d["ranges"] = ranges;
    } else {
      d["ranges"] = array(s->ranges);  // before the first sample
    }
    d["angle_min"] = s->angle_min;
    d["angle_max"] = s->angle_max;
    d["vertical_angle_min"] = s->vertical_angle_min;
    d["vertical_angle_max"] = s->vertical_angle_max;
    d["range_min"] = s->range_min;
    d["range_max"] = s->range_max;
  } else if (const auto* s = r.try_get<c::ContactReading>(e)) {
    head(*s);
    py::list contacts;
    for (const auto& k : s->contacts) {
      py::dict one;
      one["collision"] = k.collision_name;
      one["other"] = k.other_name;
      py::array_t<double> f({static_cast<py::ssize_t>(k.forces.size()), py::ssize_t{3}});
      for (std::size_t i = 0; i < k.forces.size(); ++i) {
        f.mutable_at(i, 0) = k.forces[i].X();
        f.mutable_at(i, 1) = k.forces[i].Y();
        f.mutable_at(i, 2) = k.forces[i].Z();
      }
      one["forces"] = f;
      contacts.append(one);
    }
    d["contacts"] = contacts;
  } else {
    throw ArgumentError(
        fmt::format("sensor '{}' ({}): no reading yet or a type kestrel.World does "
                    "not read (see src/python/README.md)",
                    r.scoped_name(e), r.get<c::Sensor>(e).type));
  }
  return d;
}

py::dict info_dict(const UpdateInfo& info) {
  py::dict d;
  d["sim_time"] = seconds(info.sim_time);
  d["dt"] = seconds(info.dt);
  d["iterations"] = info.iterations;
  d["paused"] = info.paused;
  d["real_time"] = seconds(info.real_time);
  return d;
}

// ---- Python systems ----------------------------------------------------------------------------

// A Python object as a System: each phase it overrides (kestrel.System's own methods are
// no-ops and skipped) is called with the GIL held as method(info, world); configure as
// configure(entity, sdf, world), sdf the <plugin> element's XML ("<plugin/>" when added from
// Python).
class PySystem final : public System,
                       public ISystemConfigure,
                       public ISystemPreUpdate,
                       public ISystemUpdate,
                       public ISystemPostUpdate,
                       public ISystemReset {
 public:
  explicit PySystem(py::object object = {}, bool loader = false)
      : object_(std::move(object)), loader_(loader) {}
  ~PySystem() override {
    py::gil_scoped_acquire gil;
    object_ = py::object();
    for (auto& m : methods_) m = py::object();
  }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry&,
                 sim::EventBus&) override {
    world_ = World::current();
    KESTREL_DEMAND(world_ != nullptr);
    py::gil_scoped_acquire gil;
    try {
      if (!object_) object_ = loader_ ? load_module(config) : instantiate(config);
      name_ = py::str(py::type::of(object_).attr("__qualname__"));
      const py::object base = py::module_::import("kestrel").attr("System");
      const py::object type = py::type::of(object_);
      for (std::size_t i = 0; i < kPhases; ++i) {
        if (!py::hasattr(type, kNames[i])) continue;
        const py::object f = type.attr(kNames[i]);
        if (py::hasattr(base, kNames[i]) && f.is(base.attr(kNames[i]))) continue;
        methods_[i] = object_.attr(kNames[i]);
      }
      if (methods_[0]) {
        methods_[0](entity, config.xml(), py::cast(world_, py::return_value_policy::reference));
      }
    } catch (py::error_already_set& e) {
      throw Error(config.where(), "Python system " + name_ + ".configure: " + e.what());
    }
  }
  void pre_update(const UpdateInfo& info, ecs::Registry&) override { call(1, info, false); }
  void update(const UpdateInfo& info, ecs::Registry&) override { call(2, info, false); }
  void post_update(const UpdateInfo& info, const ecs::Registry&) override { call(3, info, true); }
  void reset(const UpdateInfo& info, ecs::Registry&) override { call(4, info, false); }

 private:
  static constexpr std::size_t kPhases = 5;
  static constexpr const char* kNames[kPhases] = {"configure", "pre_update", "update",
                                                  "post_update", "reset"};

  // <plugin filename="kestrel-python-system" name="module.Class">: Class() from module, which
  // is imported from sys.path with the world file's folder in front of it.
  static py::object instantiate(const Element& config) {
    const auto spec = config.attribute("name").value_or("");
    const auto dot = spec.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == spec.size()) {
      throw Error(config.where(), "kestrel-python-system: name '" + spec +
                                      "' is not MODULE.CLASS (e.g. name=\"my_systems.Hover\")");
    }
    const py::object module = import_beside(config, spec.substr(0, dot));
    const std::string cls = spec.substr(dot + 1);
    if (!py::hasattr(module, cls.c_str())) {
      throw Error(config.where(), "kestrel-python-system: module '" + spec.substr(0, dot) +
                                      "' has no class '" + cls + "'");
    }
    return module.attr(cls.c_str())();
  }

  // gz-sim's PythonSystemLoader: <module_name>M</module_name>, the object M.get_system() returns.
  static py::object load_module(const Element& config) {
    const Element* m = config.child("module_name");
    if (!m || m->text().empty()) {
      throw Error(config.where(),
                  "PythonSystemLoader: <module_name> is required (the Python "
                  "module whose get_system() returns the system)");
    }
    const py::object module = import_beside(config, m->text());
    if (!py::hasattr(module, "get_system")) {
      throw Error(m->where(), "PythonSystemLoader: module '" + m->text() + "' has no get_system()");
    }
    return module.attr("get_system")();
  }

  // The module, imported from sys.path with the world file's folder in front of it.
  static py::object import_beside(const Element& config, const std::string& name) {
    py::list path = py::module_::import("sys").attr("path");
    const std::string dir = std::filesystem::path(config.file()).parent_path().string();
    if (!dir.empty() && !path.contains(dir)) path.insert(0, dir);
    return py::module_::import(name.c_str());
  }

  void call(std::size_t i, const UpdateInfo& info, bool read_only) {
    if (!methods_[i]) return;
    py::gil_scoped_acquire gil;
    const bool was = world_->read_only;
    world_->read_only = read_only;
    try {
      methods_[i](info_dict(info), py::cast(world_, py::return_value_policy::reference));
    } catch (py::error_already_set& e) {
      world_->read_only = was;
      throw Error("Python system " + name_ + "." + kNames[i] +
                  " at t = " + exact_seconds(info.sim_time) + " s: " + e.what());
    }
    world_->read_only = was;
  }

  py::object object_;
  bool loader_ = false;  // created by <module_name>'s get_system()
  std::string name_ = "?";
  py::object methods_[kPhases];
  World* world_ = nullptr;
};

std::unique_ptr<System> make_python_plugin() { return std::make_unique<PySystem>(); }
std::unique_ptr<System> make_python_loader() {
  return std::make_unique<PySystem>(py::object(), true);
}

// The built-in list with the Python systems added, in the world file and in models spawned at
// run time: `kestrel-python-system` (name MODULE.CLASS) and gz-sim's PythonSystemLoader
// (gz-sim-python-system-loader-system, <module_name>).
std::span<const world::BuiltinSystem> builtins_with_python() {
  static const std::vector<world::BuiltinSystem> list = [] {
    std::vector<world::BuiltinSystem> v(world::builtin_systems().begin(),
                                        world::builtin_systems().end());
    v.push_back({"Python", &make_python_plugin});
    v.push_back({"PythonSystemLoader", &make_python_loader});
    return v;
  }();
  return list;
}

std::unique_ptr<World> make_world(const std::string& path, std::uint64_t seed, double rtf,
                                  const std::vector<py::object>& systems) {
  WorldOptions o;
  o.path = path;
  o.seed = seed;
  o.rtf = rtf;
  o.builtins = builtins_with_python();
  if (!std::isfinite(rtf) || rtf < 0) {
    throw ArgumentError(fmt::format("rtf must be a finite number >= 0, found {}", rtf));
  }
  for (const auto& s : systems) {
    o.systems.emplace_back(std::make_unique<PySystem>(s),
                           "python:" + std::string(py::str(py::type::of(s).attr("__qualname__"))));
  }
  py::gil_scoped_release release;
  return std::make_unique<World>(std::move(o));
}

// ---- VecEnv ------------------------------------------------------------------------------------

py::array_t<double> obs_array(const VecEnv& v) {
  return py::array_t<double>(
      {static_cast<py::ssize_t>(v.size()), static_cast<py::ssize_t>(v.obs_dim())});
}

}  // namespace
}  // namespace kestrel::python

PYBIND11_MODULE(_kestrel, m) {
  using namespace kestrel::python;
  kestrel::log::init();
  m.doc() = "Kestrel: the simulator as a Python module (src/python/README.md)";

  static py::exception<kestrel::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const NameError& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const ArgumentError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const PathError& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const kestrel::Error& e) {
      error(e.what());
    }
  });

  py::class_<World>(m, "World")
      .def(py::init(&make_world), py::arg("path"), py::arg("seed") = 0, py::arg("rtf") = 0.0,
           py::arg("systems") = std::vector<py::object>{})
      .def(
          "step",
          [](World& w, std::uint64_t n) {
            py::gil_scoped_release release;
            w.step(n);
          },
          py::arg("n") = 1)
      .def(
          "reset",
          [](World& w, std::optional<std::uint64_t> seed) {
            py::gil_scoped_release release;
            w.reset(seed);
          },
          py::arg("seed") = py::none())
      .def_property_readonly("time", &World::time)
      .def_property_readonly("iterations", &World::iterations)
      .def_property("paused", &World::paused, &World::set_paused)
      .def_property_readonly("seed", &World::seed)
      .def_property_readonly("name", &World::name)
      .def_property_readonly("step_size", &World::step_size)
      .def("models", &World::models)
      .def("links", &World::links, py::arg("model"))
      .def(
          "model_pose", [](const World& w, const std::string& m) { return array(w.model_pose(m)); },
          py::arg("model"))
      .def(
          "set_model_pose",
          [](World& w, const std::string& m, const Array& pose) {
            w.set_model_pose(m, fixed<7>(pose, "set_model_pose: pose (x y z qw qx qy qz)"));
          },
          py::arg("model"), py::arg("pose"))
      .def(
          "model_velocity",
          [](const World& w, const std::string& m) { return array(w.model_velocity(m)); },
          py::arg("model"))
      .def(
          "joint_positions",
          [](const World& w, const std::string& m) {
            py::dict d;
            for (const auto& [name, q] : w.joint_positions(m)) d[py::str(name)] = array(q);
            return d;
          },
          py::arg("model"))
      .def(
          "set_joint_velocity_cmd",
          [](World& w, const std::string& m, const std::string& j, const Array& v) {
            w.set_joint_velocity_cmd(m, j, vector_of(v, "set_joint_velocity_cmd: velocity"));
          },
          py::arg("model"), py::arg("joint"), py::arg("velocity"))
      .def(
          "set_motor_speeds",
          [](World& w, const std::string& m, const Array& v) {
            w.set_motor_speeds(m, vector_of(v, "set_motor_speeds: speeds"));
          },
          py::arg("model"), py::arg("speeds"))
      .def(
          "rotor_speeds",
          [](const World& w, const std::string& m) { return array(w.rotor_speeds(m)); },
          py::arg("model"))
      .def(
          "apply_wrench",
          [](World& w, const std::string& link, const Array& f, const Array& t) {
            w.apply_wrench(link, fixed<3>(f, "apply_wrench: force"),
                           fixed<3>(t, "apply_wrench: torque"));
          },
          py::arg("link"), py::arg("force"), py::arg("torque") = std::array<double, 3>{0, 0, 0})
      .def(
          "sensor",
          [](const World& w, const std::string& name) { return sensor_dict(w, w.sensor(name)); },
          py::arg("scoped_name"))
      .def(
          "spawn",
          [](World& w, const std::string& text) {
            py::gil_scoped_release release;
            return w.spawn(text);
          },
          py::arg("sdf"))
      .def("remove", &World::remove, py::arg("model"))
      .def(
          "add_system",
          [](World& w, py::object s) {
            if (w.stepping()) {
              throw ArgumentError("add_system: not from a system while the world steps");
            }
            kestrel::sim::NewSystem n;
            n.system = std::make_unique<PySystem>(s);
            n.entity = w.runner().world();
            n.name = "python:" + std::string(py::str(py::type::of(s).attr("__qualname__")));
            n.origin = "kestrel.World.add_system";
            std::vector<kestrel::sim::NewSystem> v;
            v.push_back(std::move(n));
            w.add_systems_now(std::move(v));
          },
          py::arg("system"))
      .def("systems", [](const World& w) {
        py::list out;
        for (const auto& s : w.runner().systems()) {
          py::dict d;
          d["name"] = s.name;
          d["origin"] = s.origin;
          d["priority"] = s.priority;
          d["active"] = s.active;
          d["entity"] = w.registry().scoped_name(s.entity);
          out.append(d);
        }
        return out;
      });

  py::class_<VecEnv>(m, "_VecEnv")
      .def(py::init([](const std::string& path, std::size_t n, std::uint64_t seed,
                       std::optional<std::string> task, std::uint32_t frame_skip,
                       std::uint32_t max_episode_steps, unsigned threads) {
             VecEnvOptions o;
             o.path = path;
             o.num_envs = n;
             o.seed = seed;
             o.task = task.value_or("");
             o.frame_skip = frame_skip;
             o.max_episode_steps = max_episode_steps;
             o.threads = threads;
             py::gil_scoped_release release;
             return std::make_unique<VecEnv>(o);
           }),
           py::arg("path"), py::arg("num_envs"), py::arg("seed"), py::arg("task"),
           py::arg("frame_skip"), py::arg("max_episode_steps"), py::arg("threads"))
      .def_property_readonly("num_envs", &VecEnv::size)
      .def_property_readonly("obs_dim", &VecEnv::obs_dim)
      .def_property_readonly("act_dim", &VecEnv::act_dim)
      .def_property_readonly("max_rotor_speed", &VecEnv::max_rotor_speed)
      .def("world", &VecEnv::world, py::return_value_policy::reference_internal)
      .def("reset",
           [](VecEnv& v, std::optional<std::uint64_t> seed) {
             auto obs = obs_array(v);
             double* o = obs.mutable_data();
             py::gil_scoped_release release;
             v.reset(seed, o);
             return obs;
           })
      .def("step", [](VecEnv& v, py::object actions) {
        const auto n = static_cast<py::ssize_t>(v.size());
        Array a;
        if (!actions.is_none()) {
          a = Array::ensure(actions);
          if (!a || a.ndim() != 2 || a.shape(0) != n ||
              a.shape(1) != static_cast<py::ssize_t>(v.act_dim())) {
            throw ArgumentError(fmt::format(
                "VecEnv.step: actions must have shape ({}, {}) (rotor speeds [rad/s]), found {}", n,
                v.act_dim(), a ? shape_of(a) : std::string("an object that is not an array")));
          }
        }
        auto obs = obs_array(v), final_obs = obs_array(v);
        py::array_t<double> reward(n);
        py::array_t<bool> terminated(n), truncated(n);
        StepBuffers b{obs.mutable_data(), reward.mutable_data(), terminated.mutable_data(),
                      truncated.mutable_data(), final_obs.mutable_data()};
        const double* act = actions.is_none() ? nullptr : a.data();
        {
          py::gil_scoped_release release;
          v.step(act, b);
        }
        return py::make_tuple(obs, reward, terminated, truncated, final_obs);
      });
}
