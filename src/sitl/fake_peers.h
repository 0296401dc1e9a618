#pragma once
// Test support for the bridge tests: in-process stand-ins for PX4 (MAVLink over TCP) and
// ArduPilot (JSON over UDP) on loopback (ctest runs them in a private network namespace).

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sitl/ardupilot_packet.h"
#include "sitl/mavlink/codec.h"
#include "sitl/net.h"

namespace kestrel::sitl::peers {

namespace mav = mavlink;

inline int connect_tcp(int port) {
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
  // Like PX4, it reads everything that arrived before answering: the answer to a HIL_SENSOR is
  // sent once the whole batch it came in (GPS, distance, state) has been recorded, so a test
  // that the answer has released sees the batch.
  void loop() {
    mav::Parser parser;
    std::uint8_t buf[4096];
    while (!stop) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      std::optional<mav::HilActuatorControls> reply;
      std::lock_guard lock(m);
      parser.feed(buf, static_cast<std::size_t>(n), [&](const mav::Frame& f) {
        if (auto s = mav::decode<mav::HilSensor>(f)) {
          if (s->time_usec <= sensor.time_usec) went_back = true;
          sensor = *s;
          ++sensors;
          if (keep_log) sensor_log.push_back(*s);
          if (answer) {
            mav::HilActuatorControls a;
            a.time_usec = s->time_usec;
            a.controls[0] =
                static_cast<float>(static_cast<double>(s->time_usec / 1000 % 1000) / 1000.0);
            a.controls[1] = std::nanf("");  // must not reach the motors as NaN
            if (fixed_controls) a.controls = *fixed_controls;
            a.mode = static_cast<std::uint8_t>(mav::mav_mode_flag::kSafetyArmed);
            reply = a;
          } else {
            ++unanswered;
          }
        }
        if (auto g = mav::decode<mav::HilGps>(f)) {
          gps = *g;
          ++gpss;
          if (keep_log) gps_log.push_back(*g);
        }
        if (auto d = mav::decode<mav::DistanceSensor>(f)) {
          distance = *d;
          distance_sensor_usec = sensor.time_usec;  // the HIL_SENSOR it came with
          ++distances;
          if (keep_log) distance_log.push_back({sensor.time_usec, *d});
        }
        if (auto q = mav::decode<mav::HilStateQuaternion>(f)) state = *q;
      });
      if (!reply) continue;
      std::uint8_t out[mav::kMaxFrameSize];
      const auto k = mav::encode(*reply, 0, {1, 1}, out);
      if (garbage) {
        const std::uint8_t junk[] = {0xFD, 0xFF, 0x00, 0xFE, 0x03, 0x55};
        (void)!::send(fd, junk, sizeof junk, MSG_NOSIGNAL);
      }
      (void)!::send(fd, out, k, MSG_NOSIGNAL);
    }
  }
  int fd;
  std::thread thread;
  std::atomic<bool> stop{false}, answer{true}, garbage{false};
  // When set (under `m`), every answer carries these controls instead.
  std::optional<std::array<float, 16>> fixed_controls;
  std::mutex m;
  mav::HilSensor sensor;
  mav::HilGps gps;
  mav::HilStateQuaternion state;
  mav::DistanceSensor distance;
  int sensors = 0, gpss = 0, distances = 0;
  int unanswered = 0;  // HIL_SENSORs received while `answer` was false
  std::uint64_t distance_sensor_usec = 0;
  bool went_back = false;  // a HIL_SENSOR time_usec not after the previous one
  // With keep_log (set before the first message): every HIL_SENSOR and HIL_GPS, and every
  // DISTANCE_SENSOR with the time_usec of the HIL_SENSOR before it.
  bool keep_log = false;
  std::vector<mav::HilSensor> sensor_log;
  std::vector<mav::HilGps> gps_log;
  std::vector<std::pair<std::uint64_t, mav::DistanceSensor>> distance_log;
};

struct FakeArduPilot {
  explicit FakeArduPilot(int port) : fd(::socket(AF_INET, SOCK_DGRAM, 0)) {
    to = make_address("127.0.0.1", port, "test");
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~FakeArduPilot() { ::close(fd); }
  void send(std::uint32_t frame, std::uint16_t pwm0, std::uint16_t rate = 1000) {
    send_pwm(frame, {pwm0}, rate);
  }
  // A packet of `channels` (16 or 32) with pwm[i] on SERVO i+1 (0 beyond `pwm`).
  void send_pwm(std::uint32_t frame, const std::vector<std::uint16_t>& pwm,
                std::uint16_t rate = 1000, std::size_t channels = 16) {
    std::uint8_t p[72]{};
    mav::put_le(p, channels == 32 ? kServoMagic32 : kServoMagic16);
    mav::put_le(p + 2, rate);
    mav::put_le(p + 4, frame);
    for (std::size_t i = 0; i < pwm.size() && i < channels; ++i) mav::put_le(p + 8 + 2 * i, pwm[i]);
    ::sendto(fd, p, 8 + 2 * channels, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  std::string receive() {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  int fd;
  sockaddr_in to{};
};

}  // namespace kestrel::sitl::peers
