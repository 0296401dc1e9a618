#pragma once
/// @file A wheel's slip compliance as WheelSlip keeps it, and the command that changes it
/// (src/systems/wheel_slip/README.md).

namespace kestrel::components {

/// On a wheel link of a WheelSlip system: the wheel's unitless slip compliances now (its
/// configured ones until a WheelSlipCmd changes them). Written by WheelSlip; LookupWheelSlip
/// reads them as its nominal values.
struct WheelSlipCompliance {
  double lateral = 0.0;       ///< along the wheel collision's first friction direction
  double longitudinal = 0.0;  ///< along its second
};

/// On a wheel link of a WheelSlip system: new unitless slip compliances for the wheel, taken and
/// removed by WheelSlip in its next PreUpdate (Gazebo's WheelSlipCmd; LookupWheelSlip writes
/// it).
struct WheelSlipCmd {
  double slip_compliance_lateral = 0.0;
  double slip_compliance_longitudinal = 0.0;
};

}  // namespace kestrel::components
