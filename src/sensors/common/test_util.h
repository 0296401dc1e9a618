#pragma once
// Small test helpers shared by the sensor tests.

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <ignition/math/Vector3.hh>
#include <sstream>
#include <string>
#include <vector>

#include "kestrel/core/log.h"

namespace kestrel::sensors::testing {

inline void expect_near(const ignition::math::Vector3d& a, const ignition::math::Vector3d& b,
                        double tol) {
  EXPECT_NEAR(a.X(), b.X(), tol) << a << " vs " << b;
  EXPECT_NEAR(a.Y(), b.Y(), tol) << a << " vs " << b;
  EXPECT_NEAR(a.Z(), b.Z(), tol) << a << " vs " << b;
}

/// A world (1 ms step, gravity −9.81 z) with one static or free model `m` holding link `l`,
/// whose <link> contents are `link_body` (sensors...), plus `extra` world elements.
inline std::string one_link_world(const std::string& model_pose, const std::string& link_body,
                                  bool is_static = true, const std::string& extra = "") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.81</gravity>)" +
         extra + R"(<model name="m"><static>)" + (is_static ? "true" : "false") +
         "</static><pose>" + model_pose + R"(</pose><link name="l">
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>)" +
         link_body + R"(</link></model></world></sdf>)";
}

/// Collects what is logged while it lives (the warnings systems give at configure).
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    ::kestrel::log::init();  // the one sink's logger, which the Runner keeps
    sink_->set_pattern("%l: %v");
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() { std::erase(spdlog::default_logger()->sinks(), sink_); }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::istringstream in(text_.str());
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace kestrel::sensors::testing
