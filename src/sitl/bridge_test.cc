// The PX4 and ArduPilot bridges against in-process peers on loopback (ctest runs them in a
// private network namespace). No physics: the vehicle's state is written by the test.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/runner.h"
#include "kestrel/sitl/sitl.h"
#include "sitl/ardupilot_packet.h"
#include "sitl/frames.h"
#include "sitl/mavlink/codec.h"
#include "sitl/net.h"

namespace kestrel::sitl {
namespace {

namespace c = components;
namespace mav = mavlink;
using ignition::math::Pose3d;

// A world with one model "quad" and its link "base_link", hovering 10 m up, yawed to face north.
std::unique_ptr<sim::Runner> make_world() {
  sim::Runner::Options o;
  o.world_name = "w";
  o.real_time_factor = 0;
  auto r = std::make_unique<sim::Runner>(o);
  auto& reg = r->registry();
  reg.add<c::Gravity>(r->world());
  reg.add<c::MagneticField>(r->world());
  reg.add<c::Atmosphere>(r->world());
  reg.add<c::SphericalCoordinates>(r->world(), c::SphericalCoordinates{
                                                   "EARTH_WGS84", "ENU", 47.397742, 8.545594, 488.0, 0});
  const auto model = reg.create(r->world());
  reg.add<c::Name>(model, c::Name{"quad"});
  reg.add<c::Model>(model);
  reg.add<c::Pose>(model, c::Pose{Pose3d(0, 0, 10, 0, 0, M_PI / 2)});
  const auto link = reg.create(model);
  reg.add<c::Name>(link, c::Name{"base_link"});
  reg.add<c::Link>(link);
  reg.add<c::Pose>(link);
  reg.add<c::WorldPose>(link, c::WorldPose{Pose3d(0, 0, 10, 0, 0, M_PI / 2)});
  reg.add<c::WorldLinearVelocity>(link, c::WorldLinearVelocity{{0, 2, 0}});  // 2 m/s north
  reg.add<c::AngularVelocity>(link, c::AngularVelocity{{0, 0, 0.5}});       // yawing left
  reg.add<c::LinearAcceleration>(link);
  return r;
}

int connect_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = make_address("127.0.0.1", port, "test");
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A PX4 stand-in: answers every HIL_SENSOR with controls[0] = (time in ms mod 1000) / 1000,
// armed,
// until `answer` is false; records the last HIL_SENSOR, HIL_GPS and HIL_STATE_QUATERNION.
struct FakePx4 {
  explicit FakePx4(int port) : fd(connect_tcp(port)) {
    thread = std::thread([this] { loop(); });
  }
  ~FakePx4() {
    stop = true;
    ::shutdown(fd, SHUT_RDWR);
    thread.join();
    ::close(fd);
  }
  void loop() {
    mav::Parser parser;
    std::uint8_t buf[4096];
    while (!stop) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      parser.feed(buf, static_cast<std::size_t>(n), [&](const mav::Frame& f) {
        std::lock_guard lock(m);
        if (auto s = mav::decode<mav::HilSensor>(f)) {
          sensor = *s;
          ++sensors;
          if (answer) {
            mav::HilActuatorControls a;
            a.time_usec = s->time_usec;
            a.controls[0] = static_cast<float>(static_cast<double>(s->time_usec / 1000 % 1000) / 1000.0);
            a.controls[1] = std::nanf("");  // must not reach the motors as NaN
            a.mode = static_cast<std::uint8_t>(mav::mav_mode_flag::kSafetyArmed);
            std::uint8_t out[mav::kMaxFrameSize];
            const auto k = mav::encode(a, 0, {1, 1}, out);
            if (garbage) {
              const std::uint8_t junk[] = {0xFD, 0xFF, 0x00, 0xFE, 0x03, 0x55};
              (void)!::send(fd, junk, sizeof junk, MSG_NOSIGNAL);
            }
            (void)!::send(fd, out, k, MSG_NOSIGNAL);
          }
        }
        if (auto g = mav::decode<mav::HilGps>(f)) gps = *g, ++gpss;
        if (auto q = mav::decode<mav::HilStateQuaternion>(f)) state = *q;
      });
    }
  }
  int fd;
  std::thread thread;
  std::atomic<bool> stop{false}, answer{true}, garbage{false};
  std::mutex m;
  mav::HilSensor sensor;
  mav::HilGps gps;
  mav::HilStateQuaternion state;
  int sensors = 0, gpss = 0;
};

double rotor(sim::Runner& r, std::size_t i) {
  const auto model = r.registry().child_by_name(r.world(), "quad");
  const auto& v = r.registry().get<c::ActuatorCommands>(model).velocity;
  return i < v.size() ? v[i] : -1;
}

// lockstep_timeout: long where a stall would break the test on a loaded machine (CI runs the
// sanitizer build in parallel), short where the test is about the stall.
std::unique_ptr<sim::Runner> px4_world(int instance, double timeout = 10.0) {
  auto r = make_world();
  const auto model = r->registry().child_by_name(r->world(), "quad");
  r->add_system(make_px4_bridge_system(), model,
                Element::parse("<plugin><instance>" + std::to_string(instance) +
                               "</instance><lockstep_timeout>" + std::to_string(timeout) +
                               "</lockstep_timeout></plugin>"),
                "kestrel::systems::Px4Bridge", "test");
  r->configure();
  return r;
}

TEST(Px4Bridge, LockstepAnswersDriveTheRotorsDeterministically) {
  auto r = px4_world(11);
  FakePx4 px4(4560 + 11);
  // Before PX4 answers for the first time the world does not wait; step until it has.
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  ASSERT_GT(rotor(*r, 0), 0) << "PX4 never answered";
  // From now on every step after a HIL_SENSOR sees that message's answer: the command is the
  // time of the last sensor message in ms (mod 1000) / 1000 × 1000 rad/s — whatever the
  // wall-clock timing.
  for (int i = 0; i < 400; ++i) {
    r->step_once();
    const auto t_ns = r->info().sim_time.count();  // = end of the step just run
    // The last HIL_SENSOR was sent at the latest multiple of 4 ms ≤ the start of this step.
    if (i < 5) continue;  // messages sent before lockstep began were not waited for
    const std::int64_t start = t_ns - 1'000'000;
    const std::int64_t sensor_ns = (start / 4'000'000) * 4'000'000;
    ASSERT_NEAR(rotor(*r, 0), static_cast<double>(sensor_ns / 1'000'000 % 1000), 1e-3)
        << "step " << i;
    ASSERT_EQ(rotor(*r, 1), 0.0);  // NaN from the peer became 0
  }
}

TEST(Px4Bridge, SendsSensorsInNedFrdWithPx4Units) {
  auto r = px4_world(12);
  FakePx4 px4(4560 + 12);
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  // In lockstep the peer has read everything sent before each HIL_SENSOR it answered.
  for (int i = 0; i < 300; ++i) r->step_once();
  std::lock_guard lock(px4.m);
  ASSERT_GT(px4.gpss, 0);
  const auto& s = px4.sensor;
  // Hovering still (no acceleration): specific force is −g along FRD z.
  EXPECT_NEAR(s.zacc, -9.8, 1e-5);
  EXPECT_NEAR(s.xacc, 0, 1e-6);
  // Yawing left at 0.5 rad/s (FLU +z) is −0.5 rad/s about FRD z.
  EXPECT_NEAR(s.zgyro, -0.5, 1e-6);
  // Facing north: the field's north component (22.8758 µT) is along body x; up is −z; gauss.
  EXPECT_NEAR(s.xmag, 0.228758, 1e-6);
  EXPECT_NEAR(s.ymag, 0.055645, 1e-6);  // east is to the right (FRD +y)
  EXPECT_NEAR(s.zmag, 0.423884, 1e-6);  // field points down: FRD +z
  // 10 m above a 488 m origin in the standard atmosphere.
  EXPECT_NEAR(s.abs_pressure, 1013.25 * std::pow(1 - 0.0065 * 498 / 288.15, 5.2559), 0.05);
  EXPECT_NEAR(s.pressure_alt, 498.0, 0.05);
  EXPECT_NEAR(s.temperature, 15.0 - 0.0065 * 498, 1e-3);
  EXPECT_EQ(s.fields_updated & 0x1FFF, 0x1FFFu & ~1024u);  // all but diff_pressure
  EXPECT_EQ(s.time_usec % 4000, 0u);                        // 250 Hz on sim time
  const auto& g = px4.gps;
  EXPECT_EQ(g.fix_type, 3);
  EXPECT_GE(g.satellites_visible, 10);
  EXPECT_NEAR(g.lat, 473977420, 2);
  EXPECT_NEAR(g.lon, 85455940, 2);
  EXPECT_NEAR(g.alt, 498000, 1);
  EXPECT_EQ(g.vn, 200);  // 2 m/s north in cm/s
  EXPECT_EQ(g.ve, 0);
  EXPECT_EQ(g.vel, 200);
  EXPECT_EQ(g.cog, 0);
  EXPECT_GE(g.eph, 30);
  EXPECT_LE(g.eph, 100);
  const auto& q = px4.state;
  // Facing north, level: the NED attitude is the identity.
  EXPECT_NEAR(std::abs(q.attitude_quaternion[0]), 1.0, 1e-6);
  EXPECT_EQ(q.vx, 200);
  EXPECT_NEAR(q.yawspeed, -0.5, 1e-6);
  EXPECT_NEAR(q.zacc, -999, 1);  // mG: −9.8 / 9.80665
}

TEST(Px4Bridge, StalledPeerZeroesRotorsAfterTimeoutAndLockstepResumes) {
  auto r = px4_world(13, 0.3);
  FakePx4 px4(4560 + 13);
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  ASSERT_GT(rotor(*r, 0), 0);
  px4.answer = false;
  testing::internal::CaptureStderr();
  for (int i = 0; i < 8; ++i) r->step_once();  // one sensor message goes unanswered
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("did not answer HIL_SENSOR"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);
  px4.answer = true;
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  EXPECT_GT(rotor(*r, 0), 0);
}

TEST(Px4Bridge, DisconnectZeroesRotorsAndReconnectResumes) {
  auto r = px4_world(14);
  {
    FakePx4 px4(4560 + 14);
    for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
    ASSERT_GT(rotor(*r, 0), 0);
  }
  testing::internal::CaptureStderr();
  for (int i = 0; i < 10; ++i) r->step_once();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("PX4 disconnected"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);
  FakePx4 again(4560 + 14);
  again.garbage = true;  // and malformed bytes before every answer
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  EXPECT_GT(rotor(*r, 0), 0);
}

TEST(Px4Bridge, GarbageFromThePeerNeverCrashes) {
  auto r = px4_world(15);
  const int fd = connect_tcp(4560 + 15);
  ASSERT_GE(fd, 0);
  std::uint8_t junk[3000];
  for (std::size_t i = 0; i < sizeof junk; ++i) junk[i] = static_cast<std::uint8_t>(i * 7 + (i >> 3));
  junk[100] = 0xFD;
  junk[500] = 0xFE;
  ASSERT_EQ(::send(fd, junk, sizeof junk, 0), static_cast<ssize_t>(sizeof junk));
  for (int i = 0; i < 50; ++i) r->step_once();
  EXPECT_EQ(rotor(*r, 0), 0.0);
  ::close(fd);
  for (int i = 0; i < 10; ++i) r->step_once();
}

TEST(Px4Bridge, BadParametersAreLoud) {
  auto r = make_world();
  const auto model = r->registry().child_by_name(r->world(), "quad");
  r->add_system(make_px4_bridge_system(), model,
                Element::parse("<plugin><channel><index>16</index><rotor>0</rotor></channel>"
                               "</plugin>", "w.sdf", 3),
                "kestrel::systems::Px4Bridge", "test");
  try {
    r->configure();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w.sdf:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range (expected 0..15)"), std::string::npos)
        << e.what();
  }
}

TEST(Px4Bridge, AttachFromTheCommandLine) {
  EXPECT_EQ(parse_attach_spec("x500:3", "--px4").instance, 3u);
  EXPECT_EQ(parse_attach_spec("x500:3", "--px4").model, "x500");
  EXPECT_EQ(parse_attach_spec("w::x500", "--px4").model, "w::x500");
  EXPECT_EQ(parse_attach_spec("w::x500:2", "--px4").instance, 2u);
  EXPECT_THROW(parse_attach_spec("x500:a", "--px4"), Error);
  EXPECT_THROW(parse_attach_spec(":1", "--px4"), Error);
  auto r = make_world();
  try {
    attach_bridge(*r, Autopilot::kPx4, {"nope", 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no model 'nope' (its models: quad)"), std::string::npos)
        << e.what();
  }
  testing::internal::CaptureStderr();
  attach_bridge(*r, Autopilot::kPx4, {"quad", 16});
  r->configure();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no imu, magnetometer, air_pressure, navsat sensor; using noise-free ones"),
            std::string::npos)
      << err;
  EXPECT_GE(connect_tcp(4560 + 16), 0);  // listening
}

// ---- ArduPilot ------------------------------------------------------------------------------

struct FakeArduPilot {
  explicit FakeArduPilot(int port) : fd(::socket(AF_INET, SOCK_DGRAM, 0)) {
    to = make_address("127.0.0.1", port, "test");
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~FakeArduPilot() { ::close(fd); }
  void send(std::uint32_t frame, std::uint16_t pwm0, std::uint16_t rate = 1000) {
    std::uint8_t p[40]{};
    mav::put_le(p, kServoMagic16);
    mav::put_le(p + 2, rate);
    mav::put_le(p + 4, frame);
    mav::put_le(p + 8, pwm0);
    ::sendto(fd, p, sizeof p, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  std::string receive() {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  int fd;
  sockaddr_in to{};
};

TEST(ArduPilotBridge, EachServoPacketAdvancesOneFrameAndIsAnsweredOnce) {
  auto r = make_world();
  const auto model = r->registry().child_by_name(r->world(), "quad");
  r->add_system(make_ardupilot_bridge_system(), model,
                Element::parse("<plugin><instance>3</instance><lockstep_timeout>0.3"
                               "</lockstep_timeout></plugin>"),
                "kestrel::systems::ArduPilotBridge", "test");
  r->configure();
  FakeArduPilot ap(9002 + 30);
  // Frames at 250 Hz = 4 steps of 1 ms each.
  for (std::uint32_t frame = 1; frame <= 5; ++frame) {
    ap.send(frame, 1500, 250);
    const auto before = r->info().sim_time;
    // Runs until the reply is sent (the bridge waits for the packet in the first step).
    for (int i = 0; i < 4; ++i) r->step_once();
    EXPECT_EQ((r->info().sim_time - before).count(), 4'000'000);
    EXPECT_NEAR(rotor(*r, 0), 500.0, 1e-9);  // 1500 µs = half of 1000 rad/s
    const std::string text = ap.receive();
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.front(), '\n');
    const auto j = nlohmann::json::parse(text);
    EXPECT_NEAR(j["timestamp"].get<double>(), frame * 0.004, 1e-12);
    EXPECT_NEAR(j["imu"]["accel_body"][2].get<double>(), -9.8, 1e-9);
    EXPECT_NEAR(j["imu"]["gyro"][2].get<double>(), -0.5, 1e-12);
    EXPECT_NEAR(j["position"][2].get<double>(), -10.0, 1e-12);  // 10 m up = −10 m down
    EXPECT_NEAR(j["velocity"][0].get<double>(), 2.0, 1e-12);    // north
    EXPECT_NEAR(std::abs(j["quaternion"][0].get<double>()), 1.0, 1e-12);  // facing north
  }
  // A malformed datagram is ignored (warned once); no packet: warning after the timeout.
  const std::uint8_t junk[5] = {1, 2, 3, 4, 5};
  ::sendto(ap.fd, junk, sizeof junk, 0, reinterpret_cast<sockaddr*>(&ap.to), sizeof ap.to);
  testing::internal::CaptureStderr();
  r->step_once();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("malformed servo packet"), std::string::npos) << err;
  EXPECT_NE(err.find("no servo packet from ArduPilot"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);
  // Packets again: lockstep resumes.
  ap.send(6, 2000, 250);
  for (int i = 0; i < 4; ++i) r->step_once();
  EXPECT_NEAR(rotor(*r, 0), 1000.0, 1e-9);
  EXPECT_FALSE(ap.receive().empty());
}

TEST(ArduPilotPacket, RejectsWrongSizesAndMagic) {
  ServoPacket p;
  std::string err;
  std::uint8_t buf[72]{};
  mav::put_le(buf, kServoMagic32);
  mav::put_le(buf + 2, std::uint16_t{400});
  EXPECT_TRUE(parse_servo_packet(buf, 72, p, err)) << err;
  EXPECT_EQ(p.channels, 32u);
  EXPECT_FALSE(parse_servo_packet(buf, 40, p, err));
  EXPECT_NE(err.find("expected 72"), std::string::npos);
  mav::put_le(buf, std::uint16_t{1234});
  EXPECT_FALSE(parse_servo_packet(buf, 40, p, err));
  EXPECT_FALSE(parse_servo_packet(buf, 3, p, err));
}

}  // namespace
}  // namespace kestrel::sitl
