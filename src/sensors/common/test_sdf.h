#pragma once
// Test support: SDF text shared by the tests that build sensors from a world string (the sensor
// fault tests of src/sensors, src/transport and src/sitl).

#include <sstream>
#include <string>

namespace kestrel::sensors::testing {

/// The geodetic origin of kWorldHead.
inline constexpr double kLat0 = 47.397742, kLon0 = 8.545594, kH0 = 488.0;

/// The start of a world "w": 1 ms steps, gravity −9.81 z, <spherical_coordinates> at kLat0,
/// kLon0, kH0 (append models and "</world></sdf>").
inline constexpr const char* kWorldHead =
    R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.81</gravity>
    <spherical_coordinates><surface_model>EARTH_WGS84</surface_model>
      <world_frame_orientation>ENU</world_frame_orientation><latitude_deg>47.397742</latitude_deg>
      <longitude_deg>8.545594</longitude_deg><elevation>488</elevation></spherical_coordinates>)";

/// <noise type="TYPE"> with white-noise stddev `sd`; with `biases`, also bias_stddev sd/2 and a
/// Gauss-Markov bias of stddev sd/3 (0.5 s). Means are zero. TYPE "none" gives the noise-free
/// twin of the same world.
inline std::string noise_xml(double sd, const std::string& type, bool biases = false) {
  std::ostringstream o;
  o.precision(17);
  o << "<noise type=\"" << type << "\"><stddev>" << sd << "</stddev>";
  if (biases) {
    o << "<bias_stddev>" << sd / 2 << "</bias_stddev><dynamic_bias_stddev>" << sd / 3
      << "</dynamic_bias_stddev><dynamic_bias_correlation_time>0.5"
         "</dynamic_bias_correlation_time>";
  }
  o << "</noise>";
  return o.str();
}

/// <x>, <y> and <z> each with noise_xml(sd, type, biases).
inline std::string xyz_noise_xml(double sd, const std::string& type, bool biases = false) {
  const std::string n = noise_xml(sd, type, biases);
  return "<x>" + n + "</x><y>" + n + "</y><z>" + n + "</z>";
}

/// <sensor name="NAME" type="TYPE"> at `rate` [Hz] with `body` (and `topic` if not empty).
inline std::string sensor_xml(const std::string& name, const std::string& type, double rate,
                              const std::string& body, const std::string& topic = "") {
  std::ostringstream o;
  o << "<sensor name=\"" << name << "\" type=\"" << type << "\"><update_rate>" << rate
    << "</update_rate>";
  if (!topic.empty()) o << "<topic>" << topic << "</topic>";
  o << body << "</sensor>";
  return o.str();
}

}  // namespace kestrel::sensors::testing
