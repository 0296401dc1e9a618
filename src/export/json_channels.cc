// The JSON channels of sensors and vehicle state (json_channels.h): field names as the Gazebo
// message of the same topic has them, SI units, vectors as {x, y, z} in the frame the
// component states.
#include "export/json_channels.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/core/error.h"
#include "kestrel/export/export.h"

namespace kestrel::exports::detail {
namespace {

namespace c = kestrel::components;
using json = nlohmann::json;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;

json vec(const Vector3d& v) { return {{"x", v.X()}, {"y", v.Y()}, {"z", v.Z()}}; }
json quat(const Quaterniond& q) { return {{"x", q.X()}, {"y", q.Y()}, {"z", q.Z()}, {"w", q.W()}}; }

// JSON Schema pieces.
json number(const std::string& description) {
  return {{"type", "number"}, {"description", description}};
}
json integer(const std::string& description) {
  return {{"type", "integer"}, {"description", description}};
}
json vec_schema(const std::string& description) {
  return {
      {"type", "object"},
      {"description", description},
      {"properties",
       {{"x", {{"type", "number"}}}, {"y", {{"type", "number"}}}, {"z", {{"type", "number"}}}}}};
}
std::string schema(const std::string& title, const std::string& description, json properties) {
  return json{{"title", title},
              {"description", description},
              {"type", "object"},
              {"properties", std::move(properties)}}
      .dump(2);
}

std::string absolute(const std::string& t) { return t.starts_with("/") ? t : "/" + t; }

// A state component's feed: a message when its text changed.
template <class C, class Fill>
JsonFeed state_feed(ecs::Entity e, std::uint32_t channel, Fill fill) {
  JsonFeed f;
  f.channel = channel;
  f.entity = e;
  f.make = [fill](const ecs::Registry& reg, ecs::Entity e, json& j) {
    const C* x = reg.try_get<C>(e);
    if (!x) return false;
    fill(*x, j);
    return true;
  };
  return f;
}

// A state component's feed written as text, for those that change every step: the same
// message as its JSON tree would print (keys in the tree's sorted order), without building it.
template <class C, class Write>
JsonFeed state_text_feed(ecs::Entity e, std::uint32_t channel, Write write) {
  JsonFeed f;
  f.channel = channel;
  f.entity = e;
  f.text = [write](const ecs::Registry& reg, ecs::Entity e, JsonText& out) {
    const C* x = reg.try_get<C>(e);
    if (!x) return false;
    write(*x, out);
    return true;
  };
  return f;
}

template <class R>
std::uint64_t reading_sequence(const ecs::Registry& reg, ecs::Entity e, Duration& t) {
  const R* r = reg.try_get<R>(e);
  if (!r) return 0;
  t = r->stamp;
  return r->sequence;
}

// A sensor's feed: a message per new reading (its sequence moved), stamped with the sample's
// time; built as a JSON tree, or, for the fixed-shape samples (IMU, magnetometer, barometer,
// altimeter, GNSS, air speed), written as text.
template <class R>
void read_sequence(JsonFeed& f) {
  f.sequence = reading_sequence<R>;
  f.locate = [](const ecs::Registry& reg, ecs::Entity e) -> const void* {
    return reg.try_get<R>(e);
  };
  f.sequence_at = [](const void* reading, Duration& t) -> std::uint64_t {
    const R& r = *static_cast<const R*>(reading);
    t = r.stamp;
    return r.sequence;
  };
}
template <class R, class Fill>
JsonFeed sensor_feed(ecs::Entity e, std::uint32_t channel, Fill fill) {
  JsonFeed f = state_feed<R>(e, channel, std::move(fill));
  read_sequence<R>(f);
  return f;
}
template <class R, class Write>
JsonFeed sensor_text_feed(ecs::Entity e, std::uint32_t channel, Write write) {
  JsonFeed f = state_text_feed<R>(e, channel, std::move(write));
  read_sequence<R>(f);
  return f;
}

// Writes a JSON object's members in turn: `"key":value`, comma-separated, braces added.
class ObjectText {
 public:
  explicit ObjectText(JsonText& out) : json_(out), out_(out.text) { out_ += '{'; }
  ~ObjectText() { out_ += '}'; }
  ObjectText(const ObjectText&) = delete;
  ObjectText& operator=(const ObjectText&) = delete;
  // A number as the shortest text that reads back the same double; null when not finite
  // (JSON has neither NaN nor infinity: nlohmann's dump writes null too).
  template <std::size_t N>
  void number(const char (&key)[N], double v) {
    // `,"key":` and the number in one append.
    char text[N + 3 + 32];
    std::memcpy(text, ",\"", 2);
    std::memcpy(text + 2, key, N - 1);
    std::memcpy(text + N + 1, "\":", 2);
    const char* end = put_at(text + N + 3, v);
    out_.append(text + first_, static_cast<std::size_t>(end - text) - first_);
    first_ = false;
  }
  template <std::size_t N>
  void integer(const char (&key)[N], long long v) {
    name(key);
    const fmt::format_int text(v);
    out_.append(text.data(), text.size());
  }
  template <std::size_t N>
  void boolean(const char (&key)[N], bool v) {
    name(key);
    out_ += v ? "true" : "false";
  }
  template <std::size_t N>
  void string(const char (&key)[N], const std::string& v) {
    name(key);
    // Printable ASCII needs only its quotes and backslashes escaped; anything else (control
    // characters, UTF-8, which nlohmann checks and refuses when invalid) as nlohmann writes it.
    if (!std::all_of(v.begin(), v.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; })) {
      out_ += json(v).dump();
      return;
    }
    out_ += '"';
    for (char ch : v) {
      if (ch == '"' || ch == '\\') out_ += '\\';
      out_ += ch;
    }
    out_ += '"';
  }
  template <std::size_t N>
  void vector(const char (&key)[N], const Vector3d& v) {
    name(key);
    ObjectText o(json_);
    o.number("x", v.X());
    o.number("y", v.Y());
    o.number("z", v.Z());
  }
  template <std::size_t N>
  void quaternion(const char (&key)[N], const Quaterniond& q) {  // w, x, y, z: the sorted order
    name(key);
    ObjectText o(json_);
    o.number("w", q.W());
    o.number("x", q.X());
    o.number("y", q.Y());
    o.number("z", q.Z());
  }
  template <std::size_t N>
  void numbers(const char (&key)[N], const std::vector<double>& v) {
    name(key);
    out_ += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out_ += ',';
      put(v[i]);
    }
    out_ += ']';
  }

 private:
  // Into a local buffer, then appended: writing through a back_inserter costs twice as much
  // (callgrind).
  void put(double v) {
    char text[32];
    out_.append(text, static_cast<std::size_t>(put_at(text, v) - text));
  }
  // The number's text at `p` (at most 24 characters), or its raw form (finish_json writes it).
  char* put_at(char* p, double v) const {
    if (json_.raw_numbers) {
      *p = kRawNumber;
      std::memcpy(p + 1, &v, 8);
      return p + 9;
    }
    if (!std::isfinite(v)) {
      std::memcpy(p, "null", 4);
      return p + 4;
    }
    return json_number(p, v);
  }
  // `,"key":` (no comma before the first member) in one append.
  template <std::size_t N>
  void name(const char (&key)[N]) {
    char text[N + 3];
    text[0] = ',';
    text[1] = '"';
    std::memcpy(text + 2, key, N - 1);
    text[N + 1] = '"';
    text[N + 2] = ':';
    out_.append(text + first_, N + 3 - first_);
    first_ = false;
  }
  JsonText& json_;
  std::string& out_;
  bool first_ = true;
};

// Writes the n decimal digits of s (n: digit_count(s)) at p, two at a time from the last.
void put_digits(char* p, std::uint64_t s, int n) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char* q = p + n;
  while (q - p >= 2) {
    const auto pair = static_cast<unsigned>(s % 100);
    s /= 100;
    q -= 2;
    std::memcpy(q, kPairs + 2 * pair, 2);
  }
  if (q != p) *--q = static_cast<char>('0' + s);
}

// The number of decimal digits of s > 0: t = ⌊bit width · log10 2⌋ is that number or one less,
// and one comparison says which.
int digit_count(std::uint64_t s) {
  static constexpr auto kPowers = [] {
    std::array<std::uint64_t, 20> p{1};
    for (std::size_t i = 1; i < p.size(); ++i) p[i] = p[i - 1] * 10;
    return p;
  }();
  const int t = (std::bit_width(s) * 1233) >> 12;  // 1233 / 4096 ≈ log10(2)
  return t + (s >= kPowers[t] ? 1 : 0);
}

}  // namespace

char* json_number(char* out, double v) {
  if (std::signbit(v)) {
    *out++ = '-';
    v = -v;
  }
  if (v == 0) {
    std::memcpy(out, "0.0", 3);
    return out + 3;
  }
  // The shortest digits (no trailing zeros, n of them) and exponent e: v = digits × 10^e, from
  // fmt's Dragonbox (in fmt::detail; libfmt exports it, and export_test compares this text with
  // fmt's own "{}", so an fmt that changed either would fail it).
  const auto dec = fmt::detail::dragonbox::to_decimal(v);
  const int n = digit_count(dec.significand);
  const int e = dec.exponent;
  const int magnitude = e + n - 1;  // the exponent of the first digit
  // fmt's general format: fixed notation for magnitudes in [-4, 16), else d.ddde±XX.
  if (magnitude < -4 || magnitude >= 16) {
    put_digits(out + 1, dec.significand, n);  // then the first digit moved before the point
    out[0] = out[1];
    if (n > 1) {
      out[1] = '.';
      out += n + 1;
    } else {
      out += 1;
    }
    *out++ = 'e';
    *out++ = magnitude < 0 ? '-' : '+';
    const int x = std::abs(magnitude);
    if (x >= 100) *out++ = static_cast<char>('0' + x / 100);
    *out++ = static_cast<char>('0' + x / 10 % 10);
    *out++ = static_cast<char>('0' + x % 10);
    return out;
  }
  if (e >= 0) {  // integral: the digits, e zeros, ".0"
    put_digits(out, dec.significand, n);
    out += n;
    std::memset(out, '0', static_cast<std::size_t>(e));
    out += e;
    std::memcpy(out, ".0", 2);
    return out + 2;
  }
  const int point = n + e;  // digits before the point
  if (point > 0) {  // the digits one place on, then those before the point moved back
    put_digits(out + 1, dec.significand, n);
    for (int i = 0; i < point; ++i) out[i] = out[i + 1];
    out[point] = '.';
    return out + n + 1;
  }
  *out++ = '0';
  *out++ = '.';
  std::memset(out, '0', static_cast<std::size_t>(-point));
  out += -point;
  put_digits(out, dec.significand, n);
  return out + n;
}

}  // namespace kestrel::exports::detail

namespace kestrel::exports {

void finish_json(std::string_view raw, std::string& out) {
  for (;;) {
    const std::size_t at = raw.find(detail::kRawNumber);
    out.append(raw.substr(0, at));
    if (at == std::string_view::npos) return;
    KESTREL_DEMAND(raw.size() - at >= 9);
    double v;
    std::memcpy(&v, raw.data() + at + 1, 8);
    if (std::isfinite(v)) {
      char text[32];
      out.append(text, static_cast<std::size_t>(detail::json_number(text, v) - text));
    } else {
      out += "null";
    }
    raw.remove_prefix(at + 9);
  }
}

}  // namespace kestrel::exports

namespace kestrel::exports::detail {

std::vector<JsonFeed> json_feeds(const ecs::Registry& reg, const std::string& world_name,
                                 const AddJsonChannel& add) {
  std::vector<JsonFeed> feeds;
  const std::string imu_schema = schema(
      "kestrel.Imu", "IMU sample (sensor frame, noise included)",
      {{"orientation",
        {{"type", "object"},
         {"description", "orientation in the reference frame (ENU default); absent when disabled"},
         {"properties",
          {{"x", {{"type", "number"}}},
           {"y", {{"type", "number"}}},
           {"z", {{"type", "number"}}},
           {"w", {{"type", "number"}}}}}}},
       {"angular_velocity", vec_schema("angular velocity [rad/s]")},
       {"linear_acceleration", vec_schema("specific force [m/s²]; (0, 0, +g) at rest and level")}});
  reg.each<c::Sensor, c::SensorTopic>([&](ecs::Entity e, const c::Sensor& s,
                                          const c::SensorTopic& t) {
    const std::string topic = absolute(t.topic);
    if (s.type == "imu") {
      feeds.push_back(sensor_text_feed<c::ImuReading>(
          e, add(topic, "kestrel.Imu", imu_schema), [](const c::ImuReading& r, JsonText& out) {
            ObjectText o(out);
            o.vector("angular_velocity", r.angular_velocity);
            o.vector("linear_acceleration", r.linear_acceleration);
            if (r.has_orientation) o.quaternion("orientation", r.orientation);
          }));
    } else if (s.type == "magnetometer") {
      feeds.push_back(sensor_text_feed<c::MagnetometerReading>(
          e,
          add(topic, "kestrel.Magnetometer",
              schema("kestrel.Magnetometer", "Magnetometer sample",
                     {{"field_tesla", vec_schema("flux density, sensor frame [T]")}})),
          [](const c::MagnetometerReading& r, JsonText& out) {
            ObjectText(out).vector("field_tesla", r.field);
          }));
    } else if (s.type == "air_pressure") {
      feeds.push_back(sensor_text_feed<c::AirPressureReading>(
          e,
          add(topic, "kestrel.FluidPressure",
              schema("kestrel.FluidPressure", "Barometer sample",
                     {{"pressure", number("static pressure [Pa]")},
                      {"variance", number("noise variance [Pa²]")}})),
          [](const c::AirPressureReading& r, JsonText& out) {
            ObjectText o(out);
            o.number("pressure", r.pressure);
            o.number("variance", r.variance);
          }));
    } else if (s.type == "altimeter") {
      feeds.push_back(sensor_text_feed<c::AltimeterReading>(
          e,
          add(topic, "kestrel.Altimeter",
              schema("kestrel.Altimeter", "Altimeter sample",
                     {{"vertical_position", number("height above the start [m]")},
                      {"vertical_velocity", number("up velocity [m/s]")},
                      {"vertical_reference", number("world z at the start [m]")}})),
          [](const c::AltimeterReading& r, JsonText& out) {
            ObjectText o(out);
            o.number("vertical_position", r.vertical_position);
            o.number("vertical_reference", r.vertical_reference);
            o.number("vertical_velocity", r.vertical_velocity);
          }));
    } else if (s.type == "navsat" || s.type == "gps") {
      // Without a fix (an injected GNSS loss) the position is NaN: null in JSON.
      feeds.push_back(sensor_text_feed<c::NavSatReading>(
          e,
          add(topic, "kestrel.NavSat",
              schema("kestrel.NavSat", "GNSS sample (null position and velocity without a fix)",
                     {{"fix", {{"type", "boolean"}}},
                      {"latitude_deg", number("WGS84 latitude [deg]")},
                      {"longitude_deg", number("WGS84 longitude [deg]")},
                      {"altitude", number("height above the ellipsoid [m]")},
                      {"velocity_east", number("[m/s]")},
                      {"velocity_north", number("[m/s]")},
                      {"velocity_up", number("[m/s]")}})),
          [](const c::NavSatReading& r, JsonText& out) {
            ObjectText o(out);
            o.number("altitude", r.altitude);
            o.boolean("fix", r.fix);
            o.number("latitude_deg", r.latitude_deg);
            o.number("longitude_deg", r.longitude_deg);
            o.number("velocity_east", r.velocity_enu.X());
            o.number("velocity_north", r.velocity_enu.Y());
            o.number("velocity_up", r.velocity_enu.Z());
          }));
    } else if (s.type == "air_speed") {
      feeds.push_back(sensor_text_feed<c::AirSpeedReading>(
          e,
          add(topic, "kestrel.AirSpeed",
              schema("kestrel.AirSpeed", "Pitot-static sample",
                     {{"diff_pressure", number("dynamic pressure [Pa], negative from behind")},
                      {"temperature", number("static air temperature [K]")},
                      {"density", number("air density [kg/m³]")}})),
          [](const c::AirSpeedReading& r, JsonText& out) {
            ObjectText o(out);
            o.number("density", r.density);
            o.number("diff_pressure", r.diff_pressure);
            o.number("temperature", r.temperature);
          }));
    } else if (s.type == "contact") {
      // As Gazebo's Contacts message: collision1 is the sensor's own collision, each point's
      // wrench the force on it (body_1) and its reaction (body_2), world frame.
      feeds.push_back(sensor_feed<c::ContactReading>(
          e,
          add(topic, "kestrel.Contacts",
              schema(
                  "kestrel.Contacts",
                  "Contact sensor sample: the pairs touching now (empty when none)",
                  {{"contact",
                    {{"type", "array"},
                     {"items",
                      {{"type", "object"},
                       {"properties",
                        {{"collision1",
                          {{"type", "object"}, {"description", "the sensor's collision (name)"}}},
                         {"collision2",
                          {{"type", "object"}, {"description", "the collision it touches (name)"}}},
                         {"position", {{"type", "array"}, {"description", "world [m]"}}},
                         {"normal",
                          {{"type", "array"},
                           {"description", "unit, world, from collision2 into collision1"}}},
                         {"depth", {{"type", "array"}, {"description", "penetration [m]"}}},
                         {"wrench",
                          {{"type", "array"},
                           {"description",
                            "per point: body_1_wrench.force on collision1, body_2_wrench.force "
                            "its reaction, world [N]"}}}}}}}}},
                   {"began", {{"type", "array"}, {"description", "pairs that began touching"}}},
                   {"ended",
                    {{"type", "array"}, {"description", "pairs that stopped touching"}}}})),
          [](const c::ContactReading& r, json& j) {
            j["contact"] = json::array();
            for (const auto& k : r.contacts) {
              json cm = {{"collision1", {{"name", k.collision_name}}},
                         {"collision2", {{"name", k.other_name}}},
                         {"position", json::array()},
                         {"normal", json::array()},
                         {"depth", k.depths},
                         {"wrench", json::array()}};
              for (const auto& v : k.positions) cm["position"].push_back(vec(v));
              for (const auto& v : k.normals) cm["normal"].push_back(vec(v));
              for (const auto& f : k.forces) {
                cm["wrench"].push_back({{"body_1_wrench", {{"force", vec(f)}}},
                                        {"body_2_wrench", {{"force", vec(-f)}}}});
              }
              j["contact"].push_back(std::move(cm));
            }
            auto pairs = [](const std::vector<c::ContactEvent>& evs) {
              json a = json::array();
              for (const auto& ev : evs) {
                a.push_back({{"collision1", ev.collision_name}, {"collision2", ev.other_name}});
              }
              return a;
            };
            j["began"] = pairs(r.began);
            j["ended"] = pairs(r.ended);
          }));
    } else if (s.type == "logical_camera") {
      feeds.push_back(sensor_feed<c::LogicalCameraReading>(
          e,
          add(topic, "kestrel.LogicalCameraImage",
              schema("kestrel.LogicalCameraImage",
                     "Logical camera sample: the models whose origin is in its frustum",
                     {{"pose", {{"type", "object"}, {"description", "the sensor in the world"}}},
                      {"model",
                       {{"type", "array"},
                        {"description",
                         "name (scoped, without the world) and pose in the sensor frame"}}}})),
          [](const c::LogicalCameraReading& r, json& j) {
            j["pose"] = {{"position", vec(r.pose.Pos())}, {"orientation", quat(r.pose.Rot())}};
            j["model"] = json::array();
            for (const auto& m : r.models) {
              j["model"].push_back(
                  {{"name", m.name},
                   {"pose",
                    {{"position", vec(m.pose.Pos())}, {"orientation", quat(m.pose.Rot())}}}});
            }
          }));
    } else if (s.type == "force_torque") {
      feeds.push_back(sensor_feed<c::ForceTorqueReading>(
          e,
          add(topic, "kestrel.Wrench",
              schema(
                  "kestrel.Wrench", "Force-torque sample in the sensor's <frame>",
                  {{"force", vec_schema("[N]")}, {"torque", vec_schema("about the joint [N·m]")}})),
          [](const c::ForceTorqueReading& r, json& j) {
            j["force"] = vec(r.force);
            j["torque"] = vec(r.torque);
          }));
    }
  });

  // A bounding box camera's boxes, as Gazebo's AnnotatedAxisAligned2DBox_V /
  // AnnotatedOriented3DBox_V name them.
  reg.each<c::CameraTopics>([&](ecs::Entity e, const c::CameraTopics& t) {
    if (t.boxes.empty()) return;
    const std::string topic = absolute(t.boxes);
    if (t.boxes_3d) {
      feeds.push_back(sensor_feed<c::CameraReading>(
          e,
          add(topic, "kestrel.AnnotatedOriented3DBox_V",
              schema("kestrel.AnnotatedOriented3DBox_V",
                     "3D boxes of the labelled models seen, in the camera's view frame (x right, "
                     "y up, z backwards) [m]",
                     {{"annotated_box",
                       {{"type", "array"},
                        {"description", "{box {center, boxSize, orientation}, label}"}}}})),
          [](const c::CameraReading& r, json& j) {
            j["annotated_box"] = json::array();
            for (const auto& b : r.boxes_3d) {
              j["annotated_box"].push_back({{"box",
                                             {{"center", vec(b.center)},
                                              {"boxSize", vec(b.size)},
                                              {"orientation", quat(b.orientation)}}},
                                            {"label", b.label}});
            }
          }));
    } else {
      feeds.push_back(sensor_feed<c::CameraReading>(
          e,
          add(topic, "kestrel.AnnotatedAxisAligned2DBox_V",
              schema("kestrel.AnnotatedAxisAligned2DBox_V",
                     "2D boxes of the labelled models seen, image corners [px]",
                     {{"annotated_box",
                       {{"type", "array"},
                        {"description", "{box {min_corner {x, y}, max_corner {x, y}}, label}"}}}})),
          [](const c::CameraReading& r, json& j) {
            j["annotated_box"] = json::array();
            for (const auto& b : r.boxes_2d) {
              j["annotated_box"].push_back({{"box",
                                             {{"min_corner", {{"x", b.min_x}, {"y", b.min_y}}},
                                              {"max_corner", {{"x", b.max_x}, {"y", b.max_y}}}}},
                                            {"label", b.label}});
            }
          }));
    }
  });

  const std::string actuators_schema =
      schema("kestrel.Actuators", "Rotor speeds by actuator_number",
             {{"velocity",
               {{"type", "array"}, {"items", {{"type", "number"}}}, {"description", "[rad/s]"}}}});
  reg.each<c::Model>([&](ecs::Entity e, const c::Model&) {
    if (const auto* t = reg.try_get<c::BatteryTopic>(e); t && !t->topic.empty()) {
      feeds.push_back(state_text_feed<c::Battery>(
          e,
          add(absolute(t->topic), "kestrel.Battery",
              schema("kestrel.Battery", "LinearBattery state",
                     {{"voltage", number("terminal voltage [V]")},
                      {"open_circuit_voltage", number("[V]")},
                      {"current", number("drawn [A], > 0 discharging")},
                      {"charge", number("remaining [A·h]")},
                      {"capacity", number("[A·h]")},
                      {"percentage", number("charge / capacity, 0..1")},
                      {"power", number("drawn in the last step [W]")},
                      {"energy_used", number("since the start [J]")},
                      {"empty", {{"type", "boolean"}}},
                      {"draining", {{"type", "boolean"}}},
                      {"charging", {{"type", "boolean"}}}})),
          [](const c::Battery& b, JsonText& out) {
            ObjectText o(out);
            o.number("capacity", b.capacity);
            o.number("charge", b.charge);
            o.boolean("charging", b.charging);
            o.number("current", b.current);
            o.boolean("draining", b.draining);
            o.boolean("empty", b.empty);
            o.number("energy_used", b.energy_used);
            o.number("open_circuit_voltage", b.open_circuit_voltage);
            o.number("percentage", b.percentage);
            o.number("power", b.power);
            o.number("voltage", b.voltage);
          }));
    }
    if (const auto* t = reg.try_get<c::MissionStateTopic>(e); t && !t->topic.empty()) {
      feeds.push_back(state_text_feed<c::MissionState>(
          e,
          add(absolute(t->topic), "kestrel.Mission",
              schema("kestrel.Mission", "MulticopterMission progress",
                     {{"phase",
                       {{"type", "string"},
                        {"description", "idle, takeoff, waypoint, hold, land, completed, failed"}}},
                      {"item", integer("current mission item (-1 before the start)")},
                      {"waypoint", integer("current waypoint (-1 before the first)")},
                      {"waypoint_count", integer("waypoints in the mission")},
                      {"target", vec_schema("current target, world ENU [m]")},
                      {"distance", number("base link to the target [m]")},
                      {"tracking_error", number("off the current leg, horizontal [m]")},
                      {"max_tracking_error", number("over the legs so far [m]")},
                      {"flight_time", number("since take-off [s]")},
                      {"reason", {{"type", "string"}, {"description", "why it failed"}}}})),
          [](const c::MissionState& s, JsonText& out) {
            ObjectText o(out);
            o.number("distance", s.distance);
            o.number("flight_time", s.flight_time);
            o.integer("item", s.item);
            o.number("max_tracking_error", s.max_tracking_error);
            o.string("phase", c::mission_phase_name(s.phase));
            o.string("reason", s.reason);
            o.vector("target", s.target);
            o.number("tracking_error", s.tracking_error);
            o.integer("waypoint", s.waypoint);
            o.integer("waypoint_count", s.waypoint_count);
          }));
    }
    if (const auto* t = reg.try_get<c::RotorVelocityTopic>(e); t && !t->topic.empty()) {
      feeds.push_back(state_text_feed<c::RotorVelocities>(
          e, add(absolute(t->topic), "kestrel.Actuators", actuators_schema),
          [](const c::RotorVelocities& v, JsonText& out) {
            ObjectText(out).numbers("velocity", v.velocity);
          }));
    }
    if (const auto* t = reg.try_get<c::ActuatorCommandTopic>(e); t && !t->topic.empty()) {
      feeds.push_back(state_text_feed<c::ActuatorCommands>(
          e, add(absolute(t->topic), "kestrel.Actuators", actuators_schema),
          [](const c::ActuatorCommands& v, JsonText& out) {
            ObjectText(out).numbers("velocity", v.velocity);
          }));
    }
  });

  reg.each<c::World, c::FaultLog>([&](ecs::Entity e, const c::World&, const c::FaultLog&) {
    const std::string topic = "/world/" + world_name + "/faults";
    // Append-only: a message when the number of events changed (the tree is built then only).
    JsonFeed& f = feeds.emplace_back(state_feed<c::FaultLog>(
        e,
        add(topic, "kestrel.Faults",
            schema("kestrel.Faults", "Faults FaultInjection applied so far",
                   {{"count", integer("faults applied")},
                    {"events",
                     {{"type", "array"},
                      {"items",
                       {{"type", "object"},
                        {"properties",
                         {{"time", number("sim time applied [s]")},
                          {"description", {{"type", "string"}}}}}}}}}})),
        [](const c::FaultLog& log, json& j) {
          j["count"] = log.events.size();
          j["events"] = json::array();
          for (const auto& ev : log.events) {
            j["events"].push_back({{"time", to_seconds(ev.time)}, {"description", ev.description}});
          }
        }));
    f.sequence = [](const ecs::Registry& reg, ecs::Entity e, Duration&) -> std::uint64_t {
      const c::FaultLog* log = reg.try_get<c::FaultLog>(e);
      return log ? log->events.size() + 1 : 0;
    };
  });
  return feeds;
}

}  // namespace kestrel::exports::detail
