#pragma once
// Test support for the multicopter systems: an X3-class quadcopter world written for Kestrel
// (Gazebo X3's published physical parameters) and a Runner loaded from SDF text.

#include <filesystem>
#include <memory>
#include <string>

#include "kestrel/ecs/registry.h"
#include "kestrel/world/setup.h"
#include "kestrel/sim/runner.h"

namespace kestrel::systems::testing {

// X3 constants used by the tests' analytic checks.
inline constexpr double kBodyMass = 1.5;               // [kg]
inline constexpr double kRotorMass = 0.005;            // [kg]
inline constexpr double kMotorConstant = 8.54858e-06;  // [N/(rad/s)²]
inline constexpr double kMomentConstant = 0.016;       // [m]
inline constexpr double kGravity = 9.8;                // [m/s²]
inline constexpr double kArm = 0.18;                   // rotor distance along x and y [m]

struct QuadOptions {
  std::string name = "quad";
  double z = 1.0;  ///< initial height of the model frame [m]
  double x = 0, y = 0;
  bool ground = false;            ///< add a ground plane
  std::string motor_extra;        ///< extra XML inside every motor plugin
  std::string model_extra;        ///< extra XML inside the model (plugins)
  std::string world_extra;        ///< extra XML inside the world
  double step = 0.001;            ///< [s]
  bool velocity_control = false;  ///< add MulticopterVelocityControl (X3 gains)
};

/// The motor plugin block for rotor i (0..3) with `extra` appended inside it.
std::string motor_plugin(int i, const std::string& extra = "", const std::string& ns = "quad");
/// The model's XML (no <sdf>/<world>).
std::string quad_model(const QuadOptions& o);
/// A whole world with one quadcopter.
std::string quad_world(const QuadOptions& o);

/// A Runner with a world loaded from SDF text (written to a temporary file) and configured.
struct LoadedWorld {
  explicit LoadedWorld(const std::string& sdf, bool configure = true);
  ~LoadedWorld();
  ecs::Registry& r() { return runner->registry(); }
  ecs::Entity find(const std::string& scoped) const;
  void step(int n = 1);
  double t() const;  // sim time [s]

  std::filesystem::path file;
  std::unique_ptr<sim::Runner> runner;
  world::WorldSetup setup;
};

/// The Error message loading (and configuring) `sdf` gives, or "(no error)".
std::string load_error(const std::string& sdf);

/// Collects what the default spdlog logger writes while it lives ("level: message" lines).
class CapturedLog {
 public:
  CapturedLog();
  ~CapturedLog();
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes `text` to a fresh temporary file and returns its path.
std::filesystem::path write_temp(const std::string& text, const std::string& ext = ".sdf");

}  // namespace kestrel::systems::testing
