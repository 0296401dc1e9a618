#include "sitl/rflysim/packet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace kestrel::sitl::rflysim {
namespace {

std::array<float, 20> floats(std::initializer_list<float> v) {
  std::array<float, 20> a{};
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

TEST(RflySimPacket, SizesAndPortsFollowTheStructs) {
  EXPECT_EQ(kIntFloatSize, 120u);
  EXPECT_EQ(kDoubCtrlsSize, 232u);
  EXPECT_EQ(encode_int_float(1, {}, {}).size(), 120u);
  EXPECT_EQ(encode_doub_ctrls(1, {}).size(), 232u);
  EXPECT_EQ(input_port(1), 30100);
  EXPECT_EQ(output_port(1), 30101);
  EXPECT_EQ(input_port(3), 30104);
  EXPECT_EQ(output_port(3), 30105);
}

TEST(RflySimPacket, IntFloatIsLittleEndianAtItsOffsets) {
  const auto b = encode_int_float(2, {1, 0, 0, 0, 0, 0, 0, 7}, floats({1.0f}));
  // checksum 1234567897 = 0x499602D9, little-endian first.
  EXPECT_EQ(b[0], 0xD9);
  EXPECT_EQ(b[1], 0x02);
  EXPECT_EQ(b[2], 0x96);
  EXPECT_EQ(b[3], 0x49);
  EXPECT_EQ(b[4], 2);      // CopterID
  EXPECT_EQ(b[8], 1);      // inSILInts[0]
  EXPECT_EQ(b[36], 7);     // inSILInts[7]
  EXPECT_EQ(b[40], 0x00);  // inSILFLoats[0] = 1.0f = 0x3F800000
  EXPECT_EQ(b[42], 0x80);
  EXPECT_EQ(b[43], 0x3F);
}

TEST(RflySimPacket, DecodesAVelocityCommand) {
  const auto b = encode_int_float(1, {1}, floats({0.5f, -0.25f, -1.0f, 0.3f}));
  Command c;
  ASSERT_EQ(decode(b.data(), b.size(), 1, c), Rejection::kNone);
  EXPECT_EQ(c.mode, Mode::kVelocity);
  EXPECT_FALSE(c.doubles);
  EXPECT_EQ(c.values[0], 0.5);
  EXPECT_EQ(c.values[1], -0.25);
  EXPECT_EQ(c.values[2], -1.0);
  EXPECT_NEAR(c.values[3], 0.3, 1e-7);
}

TEST(RflySimPacket, DecodesDoubCtrlsWithTheModeInTheFirstDouble) {
  std::array<double, 28> d{};
  d[0] = 2;
  d[1] = 1.5;
  d[2] = -2.5;
  d[3] = -3;
  d[4] = 0.1;
  d[27] = 99;  // not used
  const auto b = encode_doub_ctrls(4, d);
  Command c;
  ASSERT_EQ(decode(b.data(), b.size(), 4, c), Rejection::kNone);
  EXPECT_EQ(c.mode, Mode::kPosition);
  EXPECT_TRUE(c.doubles);
  EXPECT_EQ(c.values[0], 1.5);
  EXPECT_EQ(c.values[1], -2.5);
  EXPECT_EQ(c.values[2], -3);
  EXPECT_EQ(c.values[3], 0.1);
}

TEST(RflySimPacket, RejectsEachKindAndNeverFillsTheCommand) {
  Command c;
  c.mode = Mode::kMotors;  // must stay as it was for every rejection
  const auto ok = encode_int_float(1, {1}, floats({0, 0, -1, 0}));
  EXPECT_EQ(decode(ok.data(), ok.size() - 1, 1, c), Rejection::kSize);
  const auto longer = std::vector<std::uint8_t>(121, 0);
  EXPECT_EQ(decode(longer.data(), longer.size(), 1, c), Rejection::kSize);
  const auto bad_sum = encode_int_float(1, {1}, floats({0, 0, -1, 0}), 123456789);
  EXPECT_EQ(decode(bad_sum.data(), bad_sum.size(), 1, c), Rejection::kChecksum);
  EXPECT_EQ(decode(ok.data(), ok.size(), 2, c), Rejection::kCopterId);
  const auto bad_mode = encode_int_float(1, {4}, {});
  EXPECT_EQ(decode(bad_mode.data(), bad_mode.size(), 1, c), Rejection::kMode);
  const auto negative_mode = encode_int_float(1, {-1}, {});
  EXPECT_EQ(decode(negative_mode.data(), negative_mode.size(), 1, c), Rejection::kMode);
  std::array<double, 28> d{};
  d[0] = 1.5;
  const auto half_mode = encode_doub_ctrls(1, d);
  EXPECT_EQ(decode(half_mode.data(), half_mode.size(), 1, c), Rejection::kMode);
  const auto nan = encode_int_float(1, {1}, floats({0, std::numeric_limits<float>::quiet_NaN()}));
  EXPECT_EQ(decode(nan.data(), nan.size(), 1, c), Rejection::kValue);
  const auto over = encode_int_float(1, {3}, floats({0.5f, 1.5f}));
  EXPECT_EQ(decode(over.data(), over.size(), 1, c), Rejection::kValue);
  // A NaN in a value the mode does not read is no reason to refuse it.
  const auto unused_nan =
      encode_int_float(1, {1}, floats({0, 0, 0, 0, std::numeric_limits<float>::quiet_NaN()}));
  EXPECT_EQ(c.mode, Mode::kMotors);
  EXPECT_EQ(decode(unused_nan.data(), unused_nan.size(), 1, c), Rejection::kNone);
  EXPECT_EQ(c.mode, Mode::kVelocity);
}

TEST(RflySimPacket, VehicleInfoPutsEachFieldAtItsIndex) {
  VehicleInfo v;
  v.copter_id = 3;
  v.vehicle_type = 5;
  v.runned_time = 1.25;
  v.vel_ned = {1, 2, 3};
  v.pos_ned = {4, 5, 6};
  v.euler = {0.1, 0.2, 0.3};
  v.q_ned_frd = ignition::math::Quaterniond(0.5, 0.5, 0.5, 0.5);
  for (int i = 0; i < 8; ++i) v.motor_rpm[i] = 100 + i;
  v.acc_frd = {7, 8, 9};
  v.rate_frd = {10, 11, 12};
  v.latitude_deg = 47.4;
  v.longitude_deg = 8.5;
  v.altitude = 488;
  const auto d = vehicle_info_60d(v);
  EXPECT_EQ(d[0], 3);
  EXPECT_EQ(d[1], 5);
  EXPECT_EQ(d[2], 1.25);
  EXPECT_EQ(d[3], 1);
  EXPECT_EQ(d[5], 3);
  EXPECT_EQ(d[6], 4);
  EXPECT_EQ(d[8], 6);
  EXPECT_EQ(d[9], 0.1);
  EXPECT_EQ(d[11], 0.3);
  EXPECT_EQ(d[12], 0.5);
  EXPECT_EQ(d[15], 0.5);
  EXPECT_EQ(d[16], 100);
  EXPECT_EQ(d[23], 107);
  EXPECT_EQ(d[24], 7);
  EXPECT_EQ(d[29], 12);
  EXPECT_EQ(d[30], 47.4);
  EXPECT_EQ(d[31], 8.5);
  EXPECT_EQ(d[32], 488);
  for (std::size_t i = 33; i < d.size(); ++i) EXPECT_EQ(d[i], 0) << i;
  const auto bytes = encode_doubles(d.data(), d.size());
  ASSERT_EQ(bytes.size(), 480u);
  // d[0] = 3.0 = 0x4008000000000000, little-endian.
  EXPECT_EQ(bytes[7], 0x40);
  EXPECT_EQ(bytes[6], 0x08);
  EXPECT_EQ(bytes[0], 0x00);
}

TEST(RflySimPacket, HilSensorAndGpsFollowHilSensorAndHilGpsFieldOrder) {
  HilSensorValues s;
  s.acc_frd = {1, 2, 3};
  s.gyro_frd = {4, 5, 6};
  s.mag_frd = {7, 8, 9};
  s.abs_pressure = 10;
  s.diff_pressure = 11;
  s.pressure_alt = 12;
  s.temperature = 13;
  s.fields_updated = 0x1FFF;
  const auto d = hil_sensor_30d(4000, s);
  EXPECT_EQ(d[0], 4000);
  for (int i = 1; i <= 13; ++i) EXPECT_EQ(d[i], i) << i;
  EXPECT_EQ(d[14], 0x1FFF);
  for (std::size_t i = 15; i < d.size(); ++i) EXPECT_EQ(d[i], 0) << i;
  EXPECT_EQ(encode_doubles(d.data(), d.size()).size(), 240u);

  HilGpsValues g;
  g.lat_e7 = 473977420.5;  // not rounded
  g.lon_e7 = 85455940;
  g.alt_mm = 488000;
  g.eph = 30;
  g.epv = 40;
  g.vel = 200;
  g.v_ned_cm = {200, -1, 3};
  g.cog = 35999.5;
  g.fix_type = 3;
  g.satellites = 10;
  const auto p = hil_gps_30d(8000, g);
  const double expected[] = {8000, 473977420.5, 85455940, 488000, 30, 40, 200, 200, -1, 3,
                             35999.5, 3, 10};
  for (int i = 0; i <= 12; ++i) EXPECT_EQ(p[i], expected[i]) << i;
  for (std::size_t i = 13; i < p.size(); ++i) EXPECT_EQ(p[i], 0) << i;
}

TEST(RflySimPacket, ModelInParamsDecodesAndOnlyTheMotorFaultMaps) {
  std::array<double, 32> v{};
  v[0] = kMotorFaultId;
  v[1] = 0.6;
  v[2] = 0.8;
  v[3] = v[4] = 1;
  auto b = encode_model_in_params(0b11111, v);
  ASSERT_EQ(b.size(), 264u);
  // checksum 1234567891 = 0x499602D3, Bitmask at 4, InParams[0] at 8, little-endian.
  EXPECT_EQ(b[0], 0xD3);
  EXPECT_EQ(b[3], 0x49);
  EXPECT_EQ(b[4], 0x1F);
  EXPECT_EQ(b[5], 0);
  FaultParams p;
  std::string why;
  ASSERT_EQ(decode_fault(b.data(), b.size(), p, why), Rejection::kNone) << why;
  EXPECT_EQ(p.bitmask, 0b11111u);
  EXPECT_EQ(p.values[0], 123450);
  EXPECT_EQ(p.values[2], 0.8);

  // The state keeps what earlier packets set; a packet changes the flagged entries only.
  FaultState s;
  std::vector<double> e;
  EXPECT_EQ(motor_efficiencies(s, 4, e), "");  // ID 0: no fault
  EXPECT_EQ(e, (std::vector<double>{1, 1, 1, 1}));
  FaultParams id_only;
  id_only.bitmask = 1;
  id_only.values[0] = kMotorFaultId;
  s.apply(id_only);
  EXPECT_NE(motor_efficiencies(s, 4, e).find("InParams[1, 2, 3, 4] never set"),
            std::string::npos)
      << motor_efficiencies(s, 4, e);
  s.apply(p);
  EXPECT_EQ(motor_efficiencies(s, 4, e), "");
  EXPECT_EQ(e, (std::vector<double>{0.6, 0.8, 1, 1}));
  FaultParams one;
  one.bitmask = 1u << 3;
  one.values[3] = 0;
  s.apply(one);
  EXPECT_EQ(motor_efficiencies(s, 6, e).find("InParams[5, 6] never set") != std::string::npos,
            true);
  EXPECT_EQ(motor_efficiencies(s, 4, e), "");
  EXPECT_EQ(e, (std::vector<double>{0.6, 0.8, 0, 1}));
  one.values[3] = 1.5;
  s.apply(one);
  EXPECT_NE(motor_efficiencies(s, 4, e).find("InParams[3] = 1.5 is motor 3's efficiency"),
            std::string::npos);
  s.values[0] = 123451;  // an ID Kestrel does not map
  EXPECT_NE(motor_efficiencies(s, 4, e).find("fault ID 123451"), std::string::npos);

  // Rejections: size, checksum, InitInParams, nothing flagged, a flagged NaN (an unflagged one
  // is not looked at).
  EXPECT_EQ(decode_fault(b.data(), 263, p, why), Rejection::kSize);
  auto bad = encode_model_in_params(1, v, 1234567897);
  EXPECT_EQ(decode_fault(bad.data(), bad.size(), p, why), Rejection::kChecksum);
  EXPECT_EQ(describe(Rejection::kChecksum, bad.data(), bad.size(), 1),
            "checksum 1234567897 instead of 1234567891 (PX4ModelInParams carrying FaultInParams)");
  bad = encode_model_in_params(1, v, kInitChecksum);
  EXPECT_EQ(decode_fault(bad.data(), bad.size(), p, why), Rejection::kFault);
  EXPECT_NE(why.find("InitInParams"), std::string::npos);
  bad = encode_model_in_params(0, v);
  EXPECT_EQ(decode_fault(bad.data(), bad.size(), p, why), Rejection::kFault);
  EXPECT_NE(why.find("Bitmask 0"), std::string::npos);
  v[7] = std::numeric_limits<double>::quiet_NaN();
  bad = encode_model_in_params(1u << 7, v);
  EXPECT_EQ(decode_fault(bad.data(), bad.size(), p, why), Rejection::kFault);
  EXPECT_NE(why.find("InParams[7]"), std::string::npos);
  bad = encode_model_in_params(1, v);
  EXPECT_EQ(decode_fault(bad.data(), bad.size(), p, why), Rejection::kNone);
}

TEST(RflySimPacket, TerrainAndCollisionInputsAreRecognisedAndRefusedByName) {
  // "ii20f" as RflySim's SDK packs TerrainIn15d (1234567881) and inCollision20d (1234567880).
  std::vector<std::uint8_t> b(88, 0);
  auto put_checksum = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  Command c;
  put_checksum(1234567881);
  EXPECT_EQ(decode(b.data(), b.size(), 1, c), Rejection::kModelInput);
  EXPECT_NE(describe(Rejection::kModelInput, b.data(), b.size(), 1).find("TerrainIn15d"),
            std::string::npos);
  put_checksum(1234567880);
  EXPECT_EQ(decode(b.data(), b.size(), 1, c), Rejection::kModelInput);
  EXPECT_NE(describe(Rejection::kModelInput, b.data(), b.size(), 1).find("inCollision20d"),
            std::string::npos);
  put_checksum(1234567897);
  EXPECT_EQ(decode(b.data(), b.size(), 1, c), Rejection::kChecksum);
  EXPECT_EQ(describe(Rejection::kChecksum, b.data(), b.size(), 1),
            "checksum 1234567897 instead of 1234567881 (TerrainIn15d) or 1234567880 "
            "(inCollision20d)");
  EXPECT_EQ(decode(b.data(), 87, 1, c), Rejection::kSize);
  EXPECT_STREQ(rejection_name(Rejection::kModelInput), "input the model does not take");
}

}  // namespace
}  // namespace kestrel::sitl::rflysim
