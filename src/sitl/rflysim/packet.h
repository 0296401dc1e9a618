#pragma once
/// @file RflySim / CopterSim UDP structs: the wire layouts, decoding of the two input structs
/// and encoding of the two output arrays (src/sitl/rflysim/README.md says which fact comes from
/// which public source). Everything on the wire is little-endian, packed, no padding.
///
/// Inputs (to 30100 + 2·(CopterID − 1)):
///   PX4SILIntFloat  {int32 checksum; int32 CopterID; int32 inSILInts[8]; float inSILFLoats[20];}
///                   120 bytes
///   DllInDoubCtrls  {int32 checksum; int32 CopterID; double inDoubCtrls[28];}   232 bytes
///   PX4ModelInParams {int32 checksum; uint32 Bitmask; double InParams[32];}     264 bytes
///                   (fault parameters: RflySim's FaultParamAPI.FaultInParams; no CopterID)
///   TerrainIn15d, inCollision20d {int32 checksum; int32 CopterID; float values[20];}  88 bytes
///                   (inputs of CopterSim's model DLL Kestrel's models lack: refused by name)
/// Outputs (to 30101 + 2·(CopterID − 1)): VehileInfo60d (60 doubles, 480 bytes) and
/// outCopterData (32 doubles, 256 bytes), each one datagram, told apart by size. On request
/// (the plugin's <hil_sensor_port>, <hil_gps_port>): HILSensor30d and HILGPS30d (30 doubles,
/// 240 bytes each, so each to a port of its own).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ignition/math/Quaternion.hh>
#include <ignition/math/Vector3.hh>

#include "sitl/hil.h"

namespace kestrel::sitl::rflysim {

/// The value every RflySim struct carries in `checksum`.
inline constexpr std::int32_t kChecksum = 1234567897;
inline constexpr std::size_t kIntFloatSize = 4 + 4 + 8 * 4 + 20 * 4;  ///< PX4SILIntFloat
inline constexpr std::size_t kDoubCtrlsSize = 4 + 4 + 28 * 8;         ///< DllInDoubCtrls
inline constexpr std::size_t kVehicleInfoDoubles = 60;                ///< VehileInfo60d
inline constexpr std::size_t kCopterDataDoubles = 32;                 ///< outCopterData
inline constexpr std::size_t kHilDoubles = 30;                        ///< HILSensor30d, HILGPS30d
inline constexpr std::size_t kModelInParamsSize = 4 + 4 + 32 * 8;     ///< PX4ModelInParams
/// TerrainIn15d and inCollision20d (RflySim's SDK packs both as "ii20f").
inline constexpr std::size_t kModelInputSize = 4 + 4 + 20 * 4;
inline constexpr std::int32_t kTerrainChecksum = 1234567881;           ///< TerrainIn15d
inline constexpr std::int32_t kCollisionChecksum = 1234567880;         ///< inCollision20d
/// PX4ModelInParams' checksum when it carries FaultInParams ...
inline constexpr std::int32_t kFaultChecksum = 1234567891;
/// ... and when it carries InitInParams (re-initialise the model: not supported).
inline constexpr std::int32_t kInitChecksum = 1234567892;
/// FaultInParams[0] of a motor fault (RflyMAD's ID); [1..8] the efficiencies of motors 1..8.
inline constexpr double kMotorFaultId = 123450;

/// The UDP port CopterSim listens on for vehicle `copter_id` (1, 2, ...): 30100 + 2·(ID − 1).
int input_port(int copter_id);
/// The UDP port CopterSim sends the vehicle's outputs to: 30101 + 2·(ID − 1).
int output_port(int copter_id);

/// What inSILInts[0] (or inDoubCtrls[0]) asks for, in Kestrel's meaning (README).
enum class Mode : int {
  kNone = 0,      ///< no command: nothing is applied
  kVelocity = 1,  ///< values[0..2] velocity NED [m/s], values[3] yaw rate about down [rad/s]
  kPosition = 2,  ///< values[0..2] position NED [m], values[3] yaw NED [rad]
  kMotors = 3,    ///< values[0..7] normalised rotor speed 0..1 by actuator_number
};

/// Why a datagram was not applied; one counter per kind.
enum class Rejection : int {
  kNone = 0,
  kSize,         ///< neither 120 (PX4SILIntFloat) nor 232 (DllInDoubCtrls) bytes
  kChecksum,     ///< checksum is not 1234567897
  kCopterId,     ///< CopterID is not this vehicle's
  kMode,         ///< mode is not 0..3 (or, as a double, not a whole number)
  kValue,        ///< a used setpoint is NaN or infinite, or a motor command is outside 0..1
  kUnsupported,  ///< valid, but the model cannot fly the mode (set by the bridge: modes 1 and 2
                 ///< need a MulticopterVelocityControl on the model)
  kFault,        ///< fault parameters Kestrel cannot apply (InitInParams, an empty Bitmask, a
                 ///< NaN/∞ value, an unknown fault ID, an efficiency outside 0..1, a motor
                 ///< entry never set, a world without FaultInjection)
  kModelInput,   ///< TerrainIn15d or inCollision20d: inputs Kestrel's models do not take
};
inline constexpr int kRejectionKinds = 9;
/// A short name for messages ("wrong size", "wrong checksum", ...).
const char* rejection_name(Rejection r);

/// A decoded, validated command.
struct Command {
  Mode mode = Mode::kNone;
  int copter_id = 0;
  bool doubles = false;             ///< from DllInDoubCtrls (else PX4SILIntFloat)
  std::array<double, 20> values{};  ///< inSILFLoats[0..19], or inDoubCtrls[1..20]
};

/// Decodes one datagram addressed to vehicle `copter_id`. Returns kNone and fills `out` when it
/// is valid; otherwise the first reason in the order size, checksum, CopterID, mode, value. An
/// 88-byte TerrainIn15d or inCollision20d is kModelInput (after its checksum is checked).
Rejection decode(const std::uint8_t* data, std::size_t n, int copter_id, Command& out);

/// One line on what was wrong with a datagram `decode` refused with `r` ("120 or 232 bytes
/// expected, got 100", "checksum 5 instead of 1234567897", "CopterID 2, this vehicle is 1").
std::string describe(Rejection r, const std::uint8_t* data, std::size_t n, int copter_id);

/// PX4ModelInParams as received: which InParams it sets (Bitmask bit i = InParams[i]).
struct FaultParams {
  std::uint32_t bitmask = 0;
  std::array<double, 32> values{};
};

/// Decodes a 264-byte PX4ModelInParams: kChecksum unless 1234567891 (or 1234567892), kFault with
/// `why` for InitInParams (1234567892), an empty Bitmask or a flagged value that is NaN or ∞.
Rejection decode_fault(const std::uint8_t* data, std::size_t n, FaultParams& out,
                       std::string& why);

/// The FaultInParams a vehicle holds: CopterSim's model keeps them between packets, a packet
/// changing only the entries its Bitmask flags. All 0 (no fault) at the start and after a reset.
struct FaultState {
  std::array<double, 32> values{};
  std::uint32_t written = 0;  ///< entries set since the start (or the last reset)
  void apply(const FaultParams& p);
};

/// What `s` asks of a model with `rotors` motors (actuator numbers 0..rotors−1): each motor's
/// efficiency 0..1 in `efficiency` (1 = healthy). InParams[0] is the fault ID: 0 = no fault (all
/// 1); kMotorFaultId: InParams[k] is motor k's efficiency (actuator number k − 1), k = 1..8, and
/// every motor of the model must have its entry set; any other ID cannot be mapped. Returns "" or
/// why the state cannot be applied.
std::string motor_efficiencies(const FaultState& s, std::size_t rotors,
                               std::vector<double>& efficiency);

/// Encodes PX4ModelInParams (tests and tools).
std::vector<std::uint8_t> encode_model_in_params(std::uint32_t bitmask,
                                                 const std::array<double, 32>& values,
                                                 std::int32_t checksum = kFaultChecksum);

/// Encodes PX4SILIntFloat (tests and tools; the peer test has its own independent encoder).
std::vector<std::uint8_t> encode_int_float(int copter_id, const std::array<std::int32_t, 8>& ints,
                                           const std::array<float, 20>& floats,
                                           std::int32_t checksum = kChecksum);
/// Encodes DllInDoubCtrls.
std::vector<std::uint8_t> encode_doub_ctrls(int copter_id, const std::array<double, 28>& values,
                                            std::int32_t checksum = kChecksum);

/// The vehicle's truth in RflySim's frames (NED world, FRD body) and units.
struct VehicleInfo {
  int copter_id = 1;
  int vehicle_type = 3;
  double runned_time = 0;                 ///< sim time [s]
  ignition::math::Vector3d vel_ned;       ///< VelE [m/s]
  ignition::math::Vector3d pos_ned;       ///< PosE [m]
  ignition::math::Vector3d euler;         ///< AngEuler roll, pitch, yaw [rad]
  ignition::math::Quaterniond q_ned_frd;  ///< AngQuatern w, x, y, z
  std::array<double, 8> motor_rpm{};      ///< MotorRPMS [rpm] by actuator_number
  ignition::math::Vector3d acc_frd;       ///< AccB: specific force, body FRD [m/s²]
  ignition::math::Vector3d rate_frd;      ///< RateB: angular velocity, body FRD [rad/s]
  double latitude_deg = 0, longitude_deg = 0, altitude = 0;  ///< PosGPS
};

/// VehileInfo60d: [0] copterID, [1] vehicleType, [2] runnedTime, [3..5] VelE, [6..8] PosE,
/// [9..11] AngEuler, [12..15] AngQuatern (w x y z), [16..23] MotorRPMS, [24..26] AccB,
/// [27..29] RateB, [30..32] PosGPS (latitude, longitude, altitude), [33..59] 0 (reserved).
std::array<double, kVehicleInfoDoubles> vehicle_info_60d(const VehicleInfo& v);

/// HILSensor30d: HIL_SENSOR's fields in its order and units, as doubles: [0] time_usec [us],
/// [1..3] xacc, yacc, zacc [m/s², FRD], [4..6] xgyro, ygyro, zgyro [rad/s, FRD], [7..9] xmag,
/// ymag, zmag [gauss, FRD], [10] abs_pressure [hPa], [11] diff_pressure [hPa], [12]
/// pressure_alt [m], [13] temperature [°C], [14] fields_updated (HIL_SENSOR_UPDATED_FLAGS),
/// [15..29] 0 (reserved).
std::array<double, kHilDoubles> hil_sensor_30d(double time_usec, const HilSensorValues& v);

/// HILGPS30d: HIL_GPS's fields in its order and units, as doubles (not rounded): [0] time_usec
/// [us], [1] lat [degE7], [2] lon [degE7], [3] alt [mm], [4] eph [cm], [5] epv [cm], [6] vel
/// [cm/s], [7..9] vn, ve, vd [cm/s, NED], [10] cog [cdeg], [11] fix_type, [12]
/// satellites_visible, [13..29] 0 (reserved).
std::array<double, kHilDoubles> hil_gps_30d(double time_usec, const HilGpsValues& v);

/// `n` doubles as little-endian bytes.
std::vector<std::uint8_t> encode_doubles(const double* values, std::size_t n);

}  // namespace kestrel::sitl::rflysim
