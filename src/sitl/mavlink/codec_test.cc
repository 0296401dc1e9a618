#include "sitl/mavlink/codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sensors/noise/noise.h"

namespace kestrel::sitl::mavlink {
namespace {

using Bytes = std::vector<std::uint8_t>;

template <class M>
Bytes frame_of(const M& m, std::uint8_t seq = 0) {
  Bytes out(kMaxFrameSize);
  out.resize(encode(m, seq, Endpoint{1, 1}, out.data()));
  return out;
}

std::vector<Frame> parse_all(Parser& p, const Bytes& bytes, std::size_t chunk = 0) {
  std::vector<Frame> frames;
  if (chunk == 0) chunk = bytes.size();
  for (std::size_t i = 0; i < bytes.size(); i += chunk) {
    p.feed(bytes.data() + i, std::min(chunk, bytes.size() - i),
           [&](const Frame& f) { frames.push_back(f); });
  }
  return frames;
}

HilSensor sample_sensor() {
  HilSensor s;
  s.time_usec = 123456789;
  s.xacc = 0.1f;
  s.yacc = -0.2f;
  s.zacc = -9.81f;
  s.xgyro = 0.01f;
  s.zmag = 0.43f;
  s.abs_pressure = 1013.25f;
  s.temperature = 15.0f;
  s.fields_updated = 0x01001FFF;
  s.id = 0;
  return s;
}

TEST(MavlinkCrc, CheckValueOfMcrf4xx) {
  const std::string s = "123456789";
  EXPECT_EQ(crc16_accumulate(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()), 0x6F91);
}

TEST(MavlinkGenerated, CrcExtraMatchesThePublishedValues) {
  // Values every MAVLink implementation uses for these messages (a wrong field order, type or
  // name in the generator changes them).
  EXPECT_EQ(Heartbeat::kCrcExtra, 50);
  EXPECT_EQ(SystemTime::kCrcExtra, 137);
  EXPECT_EQ(CommandLong::kCrcExtra, 152);
  EXPECT_EQ(CommandAck::kCrcExtra, 143);
  EXPECT_EQ(HilSensor::kCrcExtra, 108);
  EXPECT_EQ(HilGps::kCrcExtra, 124);
  EXPECT_EQ(HilStateQuaternion::kCrcExtra, 4);
  EXPECT_EQ(HilActuatorControls::kCrcExtra, 47);
  EXPECT_EQ(DistanceSensor::kCrcExtra, 85);
}

TEST(MavlinkGenerated, LengthsAndWireOrderFollowTypeSizes) {
  EXPECT_EQ(Heartbeat::kMaxLength, 9u);
  EXPECT_EQ(HilSensor::kMinLength, 64u);
  EXPECT_EQ(HilSensor::kMaxLength, 65u);
  EXPECT_EQ(HilGps::kMinLength, 36u);
  EXPECT_EQ(HilGps::kMaxLength, 39u);
  EXPECT_EQ(HilActuatorControls::kMaxLength, 81u);
  EXPECT_EQ(CommandAck::kMinLength, 3u);
  EXPECT_EQ(CommandAck::kMaxLength, 10u);
  // HEARTBEAT: custom_mode (uint32) first, then the uint8s in XML order, mavlink_version last.
  Heartbeat hb;
  hb.custom_mode = 0x04030201;
  hb.type = 7;
  hb.autopilot = 8;
  hb.base_mode = 9;
  hb.system_status = 10;
  std::uint8_t p[Heartbeat::kMaxLength];
  hb.encode(p);
  const std::uint8_t expected[] = {1, 2, 3, 4, 7, 8, 9, 10, kDialectVersion};
  EXPECT_EQ(0, std::memcmp(p, expected, sizeof expected));
  // HIL_ACTUATOR_CONTROLS: time_usec, flags (8 bytes), controls[16] (float), mode.
  HilActuatorControls a;
  a.flags = 0x1122334455667788ull;
  a.controls[0] = 1.0f;
  a.mode = 0x80;
  std::uint8_t q[HilActuatorControls::kMaxLength]{};
  a.encode(q);
  std::uint64_t flags = 0;
  get_le(q + 8, flags);
  EXPECT_EQ(flags, a.flags);
  float c0 = 0;
  get_le(q + 16, c0);
  EXPECT_EQ(c0, 1.0f);
  EXPECT_EQ(q[80], 0x80);
}

TEST(MavlinkGenerated, TableHoldsTheWholeDialectSortedById) {
  ASSERT_GT(std::size(kMessageInfo), 200u);
  for (std::size_t i = 1; i < std::size(kMessageInfo); ++i) {
    EXPECT_LT(kMessageInfo[i - 1].id, kMessageInfo[i].id);
  }
  ASSERT_NE(find_message(107), nullptr);
  EXPECT_EQ(find_message(107)->name, "HIL_SENSOR");
  EXPECT_EQ(find_message(0x7FFFFF), nullptr);
}

TEST(MavlinkFrame, RoundTripsEveryMessage) {
  Parser p;
  Bytes all;
  auto add = [&](const Bytes& b) { all.insert(all.end(), b.begin(), b.end()); };
  Heartbeat hb;
  hb.type = 2;
  add(frame_of(hb, 0));
  SystemTime st;
  st.time_unix_usec = 1700000000000000ull;
  add(frame_of(st, 1));
  CommandLong cl;
  cl.command = 511;
  cl.param1 = 107;
  cl.param2 = 4000;
  add(frame_of(cl, 2));
  CommandAck ca;
  ca.command = 511;
  ca.result = 0;
  add(frame_of(ca, 3));
  add(frame_of(sample_sensor(), 4));
  HilGps gps;
  gps.lat = 473977418;
  gps.lon = 85455939;
  gps.alt = 488000;
  gps.vd = -150;
  gps.fix_type = 3;
  gps.satellites_visible = 10;
  add(frame_of(gps, 5));
  HilStateQuaternion sq;
  sq.attitude_quaternion = {1, 0, 0, 0};
  sq.zacc = -1000;
  add(frame_of(sq, 6));
  HilActuatorControls ac;
  ac.controls = {0.5f, 0.6f, 0.7f, 0.8f};
  ac.mode = 128;
  add(frame_of(ac, 7));
  DistanceSensor ds;
  ds.current_distance = 150;
  ds.quaternion = {1, 0, 0, 0};
  add(frame_of(ds, 8));

  const auto frames = parse_all(p, all, 7);  // odd chunks: frames straddle feeds
  ASSERT_EQ(frames.size(), 9u);
  for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frames[i].seq, i);
  EXPECT_EQ(decode<Heartbeat>(frames[0])->type, 2);
  EXPECT_EQ(decode<Heartbeat>(frames[0])->mavlink_version, 3);
  EXPECT_EQ(decode<SystemTime>(frames[1])->time_unix_usec, st.time_unix_usec);
  EXPECT_EQ(decode<CommandLong>(frames[2])->param2, 4000.0f);
  EXPECT_EQ(decode<CommandAck>(frames[3])->command, 511);
  const auto s = decode<HilSensor>(frames[4]);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->time_usec, 123456789u);
  EXPECT_EQ(s->zacc, -9.81f);
  EXPECT_EQ(s->fields_updated, 0x01001FFFu);
  EXPECT_EQ(decode<HilGps>(frames[5])->lat, 473977418);
  EXPECT_EQ(decode<HilGps>(frames[5])->vd, -150);
  EXPECT_EQ(decode<HilStateQuaternion>(frames[6])->zacc, -1000);
  EXPECT_EQ(decode<HilActuatorControls>(frames[7])->controls[3], 0.8f);
  EXPECT_EQ(decode<DistanceSensor>(frames[8])->current_distance, 150);
  EXPECT_FALSE(decode<Heartbeat>(frames[4]));  // wrong type
  EXPECT_EQ(p.stats().frames, 9u);
  EXPECT_EQ(p.stats().skipped_bytes, 0u);
}

TEST(MavlinkFrame, TrailingZerosAreTrimmedAndRestoredAsZeros) {
  HilSensor s = sample_sensor();  // id (the last byte) is 0
  const Bytes b = frame_of(s);
  EXPECT_EQ(b[1], 64);  // 65-byte payload, one trailing zero dropped
  EXPECT_EQ(b.size(), 10u + 64u + 2u);
  Heartbeat zero;
  zero.mavlink_version = 0;
  const Bytes z = frame_of(zero);
  EXPECT_EQ(z[1], 1);  // all zero: one byte stays
  Parser p;
  const auto frames = parse_all(p, z);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(decode<Heartbeat>(frames[0])->custom_mode, 0u);
}

TEST(MavlinkFrame, AcceptsV1Frames) {
  HilActuatorControls a;
  a.controls[2] = 0.25f;
  a.mode = 129;
  std::uint8_t payload[HilActuatorControls::kMaxLength];
  a.encode(payload);
  Bytes b(kMaxFrameSize);
  b.resize(write_frame_v1(HilActuatorControls::kId, HilActuatorControls::kCrcExtra, payload,
                          sizeof payload, 42, {1, 1}, b.data()));
  Parser p;
  const auto frames = parse_all(p, b, 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].version, 1);
  EXPECT_EQ(frames[0].seq, 42);
  EXPECT_EQ(decode<HilActuatorControls>(frames[0])->controls[2], 0.25f);
}

TEST(MavlinkParser, SkipsGarbageBadCrcAndTruncatedFrames) {
  const Bytes good = frame_of(sample_sensor());
  Bytes stream = {0x00, 0x12, kStxV2, 0x00, kStxV1};  // noise, including start bytes
  Bytes bad = good;
  bad[20] ^= 0x40;  // corrupt the payload: CRC fails
  stream.insert(stream.end(), bad.begin(), bad.end());
  stream.insert(stream.end(), good.begin(), good.begin() + 30);  // truncated frame
  stream.insert(stream.end(), good.begin(), good.end());
  stream.insert(stream.end(), {0xFF, 0xEE});
  Parser p;
  const auto frames = parse_all(p, stream, 3);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(decode<HilSensor>(frames[0])->time_usec, 123456789u);
  EXPECT_GE(p.stats().bad_crc, 1u);
  EXPECT_GT(p.stats().skipped_bytes, 0u);
}

TEST(MavlinkParser, HandlesSignedFramesBadFlagsUnknownIdsAndBadV1Length) {
  Parser p;
  Bytes stream;
  // Signed frame: incompat flag 1, 13 signature bytes after the CRC (not checked by Kestrel).
  Bytes s = frame_of(sample_sensor());
  s[2] = kIncompatSigned;
  std::uint16_t crc = crc16_accumulate(s.data() + 1, s.size() - 3);
  const std::uint8_t extra = HilSensor::kCrcExtra;
  crc = crc16_accumulate(&extra, 1, crc);
  put_le(s.data() + s.size() - 2, crc);
  s.insert(s.end(), kSignatureSize, 0xAB);
  stream.insert(stream.end(), s.begin(), s.end());
  // Unsupported incompat flag.
  Bytes f = frame_of(sample_sensor());
  f[2] = 0x02;
  stream.insert(stream.end(), f.begin(), f.end());
  // Unknown message id.
  Bytes u = frame_of(sample_sensor());
  u[7] = 0xEE;
  u[8] = 0xEE;
  u[9] = 0x7E;
  stream.insert(stream.end(), u.begin(), u.end());
  // v1 frame with the wrong length for its message (a valid CRC does not make it acceptable).
  std::uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  Bytes v1(kMaxFrameSize);
  v1.resize(write_frame_v1(Heartbeat::kId, Heartbeat::kCrcExtra, payload, 8, 0, {1, 1}, v1.data()));
  stream.insert(stream.end(), v1.begin(), v1.end());
  const Bytes good = frame_of(sample_sensor(), 99);
  stream.insert(stream.end(), good.begin(), good.end());

  const auto frames = parse_all(p, stream);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].incompat_flags, kIncompatSigned);
  EXPECT_EQ(frames[1].seq, 99);
  EXPECT_EQ(p.stats().bad_flags, 1u);
  EXPECT_GE(p.stats().unknown_id, 1u);
  EXPECT_EQ(p.stats().bad_length, 1u);
}

TEST(MavlinkParser, OversizedV2LengthIsRejected) {
  // A HEARTBEAT claiming 40 payload bytes (max 9), with a CRC that matches those 40 bytes.
  std::uint8_t payload[40]{};
  payload[39] = 1;
  Bytes b(kMaxFrameSize);
  b.resize(write_frame_v2(Heartbeat::kId, Heartbeat::kCrcExtra, payload, 40, 0, {1, 1}, b.data()));
  const Bytes good = frame_of(sample_sensor());
  b.insert(b.end(), good.begin(), good.end());
  Parser p;
  const auto frames = parse_all(p, b);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].msgid, HilSensor::kId);
  EXPECT_EQ(p.stats().bad_length, 1u);
}

TEST(MavlinkParser, RecoversEveryFrameFromSeededNoise) {
  sensors::Rng rng(7);  // the project's one random scheme (src/sensors/noise)
  Bytes stream;
  const int kFrames = 500;
  for (int i = 0; i < kFrames; ++i) {
    for (int n = static_cast<int>(rng.next() % 41); n > 0; --n) {
      const auto b = static_cast<std::uint8_t>(rng.next() & 0xff);
      stream.push_back(b);
    }
    HilSensor s = sample_sensor();
    s.time_usec = static_cast<std::uint64_t>(i);
    const Bytes f = frame_of(s, static_cast<std::uint8_t>(i));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  Parser p;
  std::vector<std::uint64_t> seen;
  for (std::size_t i = 0; i < stream.size(); i += 13) {
    p.feed(stream.data() + i, std::min<std::size_t>(13, stream.size() - i), [&](const Frame& f) {
      if (auto s = decode<HilSensor>(f)) seen.push_back(s->time_usec);
    });
  }
  // Noise can start a "frame" that swallows a real one's first bytes, but resynchronising one
  // byte at a time finds every real frame again.
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) EXPECT_EQ(seen[i], static_cast<std::uint64_t>(i));
  EXPECT_LE(p.buffered(), kMaxFrameSize);
}

}  // namespace
}  // namespace kestrel::sitl::mavlink
