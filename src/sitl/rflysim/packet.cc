#include "sitl/rflysim/packet.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/core.h>

namespace kestrel::sitl::rflysim {
namespace {

// Little-endian reads and writes, whatever the host's byte order.
std::uint32_t read_u32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
std::uint64_t read_u64(const std::uint8_t* p) {
  return std::uint64_t{read_u32(p)} | std::uint64_t{read_u32(p + 4)} << 32;
}
std::int32_t read_i32(const std::uint8_t* p) { return std::bit_cast<std::int32_t>(read_u32(p)); }
float read_f32(const std::uint8_t* p) { return std::bit_cast<float>(read_u32(p)); }
double read_f64(const std::uint8_t* p) { return std::bit_cast<double>(read_u64(p)); }

void write_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void write_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// How many values a mode reads (the rest are not looked at).
std::size_t used_values(Mode m) {
  switch (m) {
    case Mode::kVelocity:
    case Mode::kPosition:
      return 4;
    case Mode::kMotors:
      return 8;
    case Mode::kNone:
      break;
  }
  return 0;
}

Rejection validate(Command& c, double mode) {
  if (!(mode >= 0 && mode <= 3) || mode != std::floor(mode)) return Rejection::kMode;
  c.mode = static_cast<Mode>(static_cast<int>(mode));
  for (std::size_t i = 0; i < used_values(c.mode); ++i) {
    const double v = c.values[i];
    if (!std::isfinite(v)) return Rejection::kValue;
    if (c.mode == Mode::kMotors && (v < 0 || v > 1)) return Rejection::kValue;
  }
  return Rejection::kNone;
}

}  // namespace

int input_port(int copter_id) { return 30100 + 2 * (copter_id - 1); }
int output_port(int copter_id) { return 30101 + 2 * (copter_id - 1); }

const char* rejection_name(Rejection r) {
  switch (r) {
    case Rejection::kNone:
      return "valid";
    case Rejection::kSize:
      return "wrong size";
    case Rejection::kChecksum:
      return "wrong checksum";
    case Rejection::kCopterId:
      return "unknown CopterID";
    case Rejection::kMode:
      return "unknown mode";
    case Rejection::kValue:
      return "bad setpoint value";
    case Rejection::kUnsupported:
      return "mode the model cannot fly";
    case Rejection::kFault:
      return "fault Kestrel cannot apply";
    case Rejection::kModelInput:
      return "input the model does not take";
  }
  return "?";
}

Rejection decode(const std::uint8_t* data, std::size_t n, int copter_id, Command& out) {
  if (n == kModelInputSize) {
    const std::int32_t checksum = read_i32(data);
    return checksum == kTerrainChecksum || checksum == kCollisionChecksum ? Rejection::kModelInput
                                                                          : Rejection::kChecksum;
  }
  if (n != kIntFloatSize && n != kDoubCtrlsSize) return Rejection::kSize;  // (264: decode_fault)
  if (read_i32(data) != kChecksum) return Rejection::kChecksum;
  Command c;
  c.copter_id = read_i32(data + 4);
  if (c.copter_id != copter_id) return Rejection::kCopterId;
  double mode = 0;
  if (n == kIntFloatSize) {
    mode = read_i32(data + 8);  // inSILInts[0]; inSILInts[1..7] are not used
    for (std::size_t i = 0; i < 20; ++i) c.values[i] = read_f32(data + 40 + 4 * i);
  } else {
    c.doubles = true;
    mode = read_f64(data + 8);  // inDoubCtrls[0]; [21..27] are not used
    for (std::size_t i = 0; i < 20; ++i) c.values[i] = read_f64(data + 16 + 8 * i);
  }
  if (const Rejection r = validate(c, mode); r != Rejection::kNone) return r;
  out = c;
  return Rejection::kNone;
}

std::string describe(Rejection r, const std::uint8_t* data, std::size_t n, int copter_id) {
  switch (r) {
    case Rejection::kSize:
      return fmt::format("{} bytes, expected {} (PX4SILIntFloat), {} (DllInDoubCtrls) or {} "
                         "(PX4ModelInParams)",
                         n, kIntFloatSize, kDoubCtrlsSize, kModelInParamsSize);
    case Rejection::kChecksum:
      if (n == kModelInputSize) {
        return fmt::format("checksum {} instead of {} (TerrainIn15d) or {} (inCollision20d)",
                           read_i32(data), kTerrainChecksum, kCollisionChecksum);
      }
      return n == kModelInParamsSize
                 ? fmt::format("checksum {} instead of {} (PX4ModelInParams carrying "
                               "FaultInParams)",
                               read_i32(data), kFaultChecksum)
                 : fmt::format("checksum {} instead of {}", read_i32(data), kChecksum);
    case Rejection::kCopterId:
      return fmt::format("CopterID {}, this vehicle is {}", read_i32(data + 4), copter_id);
    case Rejection::kMode:
      return n == kIntFloatSize
                 ? fmt::format("inSILInts[0] = {}, expected 0..3", read_i32(data + 8))
                 : fmt::format("inDoubCtrls[0] = {}, expected 0, 1, 2 or 3", read_f64(data + 8));
    case Rejection::kValue:
      return "a setpoint the mode uses is NaN or infinite, or a motor command is outside 0..1";
    case Rejection::kUnsupported:
      return "modes 1 and 2 drive the model's MulticopterVelocityControl, and it has none";
    case Rejection::kFault:
      return "fault parameters Kestrel cannot apply";
    case Rejection::kModelInput:
      return read_i32(data) == kTerrainChecksum
                 ? "TerrainIn15d (checksum 1234567881): the terrain input of CopterSim's model "
                   "DLL; Kestrel's ground is the world's collision geometry, which does not "
                   "change at run time"
                 : "inCollision20d (checksum 1234567880): RflySim3D's collision input to "
                   "CopterSim's model DLL; Kestrel's physics finds its own contacts";
    case Rejection::kNone:
      break;
  }
  return "valid";
}

Rejection decode_fault(const std::uint8_t* data, std::size_t n, FaultParams& out,
                       std::string& why) {
  if (n != kModelInParamsSize) return Rejection::kSize;
  const std::int32_t checksum = read_i32(data);
  if (checksum == kInitChecksum) {
    why = fmt::format("checksum {}: InitInParams (re-initialising the model's parameters) is not "
                      "supported; Kestrel maps FaultInParams (checksum {}) only",
                      kInitChecksum, kFaultChecksum);
    return Rejection::kFault;
  }
  if (checksum != kFaultChecksum) return Rejection::kChecksum;
  FaultParams p;
  p.bitmask = read_u32(data + 4);
  for (std::size_t i = 0; i < 32; ++i) p.values[i] = read_f64(data + 8 + 8 * i);
  if (p.bitmask == 0) {
    why = "Bitmask 0: the packet sets no InParams entry";
    return Rejection::kFault;
  }
  for (std::size_t i = 0; i < 32; ++i) {
    if ((p.bitmask >> i & 1u) && !std::isfinite(p.values[i])) {
      why = fmt::format("InParams[{}] = {} (flagged in Bitmask) is not a finite number", i,
                        p.values[i]);
      return Rejection::kFault;
    }
  }
  out = p;
  return Rejection::kNone;
}

void FaultState::apply(const FaultParams& p) {
  for (std::size_t i = 0; i < 32; ++i) {
    if (p.bitmask >> i & 1u) values[i] = p.values[i];
  }
  written |= p.bitmask;
}

std::string motor_efficiencies(const FaultState& s, std::size_t rotors,
                               std::vector<double>& efficiency) {
  efficiency.assign(rotors, 1.0);
  const double id = s.values[0];
  if (id == 0) return "";
  if (id != kMotorFaultId) {
    return fmt::format("fault ID {} (InParams[0]): Kestrel maps {} (motor fault: InParams[1..8] "
                       "the motors' efficiencies) and 0 (no fault) only",
                       id, kMotorFaultId);
  }
  if (rotors == 0) return "motor fault: the model has no motors";
  std::string unset;
  for (std::size_t k = 1; k <= std::min<std::size_t>(rotors, 8); ++k) {
    if (!(s.written >> k & 1u)) {
      unset += fmt::format("{}{}", unset.empty() ? "" : ", ", k);
      continue;
    }
    const double e = s.values[k];
    if (!(e >= 0 && e <= 1)) {
      return fmt::format("motor fault: InParams[{}] = {} is motor {}'s efficiency, expected 0..1 "
                         "(0 = failed, 1 = healthy)",
                         k, e, k);
    }
    efficiency[k - 1] = e;
  }
  if (!unset.empty()) {
    return fmt::format("motor fault: InParams[{}] never set; the model's {} motors each need "
                       "their efficiency (InParams[1..{}])",
                       unset, rotors, std::min<std::size_t>(rotors, 8));
  }
  return "";
}

std::vector<std::uint8_t> encode_model_in_params(std::uint32_t bitmask,
                                                 const std::array<double, 32>& values,
                                                 std::int32_t checksum) {
  std::vector<std::uint8_t> out;
  out.reserve(kModelInParamsSize);
  write_u32(out, std::bit_cast<std::uint32_t>(checksum));
  write_u32(out, bitmask);
  for (double v : values) write_u64(out, std::bit_cast<std::uint64_t>(v));
  return out;
}

std::vector<std::uint8_t> encode_int_float(int copter_id, const std::array<std::int32_t, 8>& ints,
                                           const std::array<float, 20>& floats,
                                           std::int32_t checksum) {
  std::vector<std::uint8_t> out;
  out.reserve(kIntFloatSize);
  write_u32(out, std::bit_cast<std::uint32_t>(checksum));
  write_u32(out, std::bit_cast<std::uint32_t>(static_cast<std::int32_t>(copter_id)));
  for (std::int32_t v : ints) write_u32(out, std::bit_cast<std::uint32_t>(v));
  for (float v : floats) write_u32(out, std::bit_cast<std::uint32_t>(v));
  return out;
}

std::vector<std::uint8_t> encode_doub_ctrls(int copter_id, const std::array<double, 28>& values,
                                            std::int32_t checksum) {
  std::vector<std::uint8_t> out;
  out.reserve(kDoubCtrlsSize);
  write_u32(out, std::bit_cast<std::uint32_t>(checksum));
  write_u32(out, std::bit_cast<std::uint32_t>(static_cast<std::int32_t>(copter_id)));
  for (double v : values) write_u64(out, std::bit_cast<std::uint64_t>(v));
  return out;
}

std::array<double, kVehicleInfoDoubles> vehicle_info_60d(const VehicleInfo& v) {
  std::array<double, kVehicleInfoDoubles> d{};
  d[0] = v.copter_id;
  d[1] = v.vehicle_type;
  d[2] = v.runned_time;
  for (int i = 0; i < 3; ++i) {
    d[3 + i] = v.vel_ned[i];
    d[6 + i] = v.pos_ned[i];
    d[9 + i] = v.euler[i];
    d[24 + i] = v.acc_frd[i];
    d[27 + i] = v.rate_frd[i];
  }
  d[12] = v.q_ned_frd.W();
  d[13] = v.q_ned_frd.X();
  d[14] = v.q_ned_frd.Y();
  d[15] = v.q_ned_frd.Z();
  for (int i = 0; i < 8; ++i) d[16 + i] = v.motor_rpm[i];
  d[30] = v.latitude_deg;
  d[31] = v.longitude_deg;
  d[32] = v.altitude;
  return d;
}

std::array<double, kHilDoubles> hil_sensor_30d(double time_usec, const HilSensorValues& v) {
  std::array<double, kHilDoubles> d{};
  d[0] = time_usec;
  for (int i = 0; i < 3; ++i) {
    d[1 + i] = v.acc_frd[i];
    d[4 + i] = v.gyro_frd[i];
    d[7 + i] = v.mag_frd[i];
  }
  d[10] = v.abs_pressure;
  d[11] = v.diff_pressure;
  d[12] = v.pressure_alt;
  d[13] = v.temperature;
  d[14] = v.fields_updated;
  return d;
}

std::array<double, kHilDoubles> hil_gps_30d(double time_usec, const HilGpsValues& v) {
  std::array<double, kHilDoubles> d{};
  d[0] = time_usec;
  d[1] = v.lat_e7;
  d[2] = v.lon_e7;
  d[3] = v.alt_mm;
  d[4] = v.eph;
  d[5] = v.epv;
  d[6] = v.vel;
  for (int i = 0; i < 3; ++i) d[7 + i] = v.v_ned_cm[i];
  d[10] = v.cog;
  d[11] = v.fix_type;
  d[12] = v.satellites;
  return d;
}

std::vector<std::uint8_t> encode_doubles(const double* values, std::size_t n) {
  std::vector<std::uint8_t> out;
  out.reserve(8 * n);
  for (std::size_t i = 0; i < n; ++i) write_u64(out, std::bit_cast<std::uint64_t>(values[i]));
  return out;
}

}  // namespace kestrel::sitl::rflysim
