#include "sensors/noise/noise.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kestrel::sensors {
namespace {

NoiseParams parse(const std::string& xml) { return parse_noise(Element::parse(xml).get()); }

struct Stats {
  double mean = 0, stddev = 0;
};
Stats stats(const std::vector<double>& v) {
  double s = 0, s2 = 0;
  for (double x : v) s += x;
  const double m = s / v.size();
  for (double x : v) s2 += (x - m) * (x - m);
  return {m, std::sqrt(s2 / (v.size() - 1))};
}

TEST(Noise, ParsesEveryParameter) {
  const auto p = parse(R"(<noise type="gaussian_quantized"><mean>0.1</mean><stddev>0.2</stddev>
      <bias_mean>0.3</bias_mean><bias_stddev>0.4</bias_stddev>
      <dynamic_bias_stddev>0.5</dynamic_bias_stddev>
      <dynamic_bias_correlation_time>6</dynamic_bias_correlation_time>
      <precision>0.01</precision></noise>)");
  EXPECT_EQ(p.type, NoiseParams::Type::kGaussianQuantized);
  EXPECT_EQ(p.mean, 0.1);
  EXPECT_EQ(p.stddev, 0.2);
  EXPECT_EQ(p.bias_mean, 0.3);
  EXPECT_EQ(p.bias_stddev, 0.4);
  EXPECT_EQ(p.dynamic_bias_stddev, 0.5);
  EXPECT_EQ(p.dynamic_bias_correlation_time, 6);
  EXPECT_EQ(p.precision, 0.01);
}

TEST(Noise, BadInputIsLoud) {
  EXPECT_THAT([] { parse(R"(<noise type="gausian"/>)"); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("expected type none, gaussian")));
  EXPECT_THAT([] { parse(R"(<noise type="gaussian"><stdev>1</stdev></noise>)"); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("unknown parameter <stdev>")));
  EXPECT_THAT([] { parse(R"(<noise type="gaussian"><stddev>-1</stddev></noise>)"); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("<stddev> must be")));
  EXPECT_THAT([] { parse(R"(<noise type="gaussian"><precision>1</precision></noise>)"); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("gaussian_quantized")));
  EXPECT_THAT(
      [] { parse(R"(<noise type="gaussian"><dynamic_bias_stddev>1</dynamic_bias_stddev></noise>)"); },
      testing::ThrowsMessage<Error>(testing::HasSubstr("dynamic_bias_correlation_time")));
  EXPECT_THAT([] { parse(R"(<noise type="gaussian"><stddev>abc</stddev></noise>)"); },
              testing::Throws<Error>());
}

TEST(Noise, NoneAndAbsentPassThrough) {
  Noise n(parse(R"(<noise type="none"><stddev>5</stddev></noise>)"), 1);
  EXPECT_EQ(n.apply(1.25, 0.01), 1.25);
  Noise absent(parse_noise(nullptr), 1);
  EXPECT_EQ(absent.apply(-3.0, 0.01), -3.0);
}

TEST(Noise, GaussianStatisticsOver1e5Samples) {
  NoiseParams p;
  p.type = NoiseParams::Type::kGaussian;
  p.mean = 0.5;
  p.stddev = 2.0;
  Noise n(p, derive_seed(7, "w::m::l::s", "x"));
  std::vector<double> v;
  for (int i = 0; i < 100000; ++i) v.push_back(n.apply(10.0, 0.001) - 10.0);
  const Stats s = stats(v);
  // Within 2 % (of the stddev for the mean: the standard error is 0.3 %).
  EXPECT_NEAR(s.mean, 0.5, 0.02 * 2.0);
  EXPECT_NEAR(s.stddev, 2.0, 0.02 * 2.0);
  EXPECT_EQ(n.variance(), 4.0);
}

TEST(Noise, BiasIsDrawnOnceAndConstantWithinARun) {
  NoiseParams p;
  p.type = NoiseParams::Type::kGaussian;
  p.bias_mean = 1.0;
  p.bias_stddev = 0.1;
  Noise n(p, 99);
  const double b = n.bias();
  EXPECT_NEAR(std::abs(b), 1.0, 0.5);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(n.apply(0, 0.01), b);  // stddev 0: output = bias
  // Across seeds the bias is distributed as ±N(1, 0.1): |bias| statistics.
  std::vector<double> mags;
  int negative = 0;
  for (int s = 0; s < 20000; ++s) {
    Noise k(p, derive_seed(s, "w::m::l::s", "x"));
    mags.push_back(std::abs(k.bias()));
    negative += k.bias() < 0;
  }
  const Stats st = stats(mags);
  EXPECT_NEAR(st.mean, 1.0, 0.02);
  EXPECT_NEAR(st.stddev, 0.1, 0.02 * 0.1 * 5);
  EXPECT_NEAR(negative / 20000.0, 0.5, 0.02);
}

TEST(Noise, GaussMarkovStationaryDeviationAndCorrelation) {
  NoiseParams p;
  p.type = NoiseParams::Type::kGaussian;
  p.dynamic_bias_stddev = 0.3;
  p.dynamic_bias_correlation_time = 0.05;  // 50 samples at dt = 1 ms
  Noise n(p, 5);
  const double dt = 0.001;
  for (int i = 0; i < 2000; ++i) n.apply(0, dt);  // forget the zero start
  std::vector<double> b;
  for (int i = 0; i < 400000; ++i) b.push_back(n.apply(0, dt));
  const Stats s = stats(b);
  EXPECT_NEAR(s.stddev, 0.3, 0.02 * 0.3 * 2);  // correlated samples: fewer effective ones
  // Lag-one autocorrelation of a first-order Gauss-Markov process is exp(-dt/tau).
  double c = 0;
  for (std::size_t i = 1; i < b.size(); ++i) c += (b[i] - s.mean) * (b[i - 1] - s.mean);
  c /= (b.size() - 1) * s.stddev * s.stddev;
  EXPECT_NEAR(c, std::exp(-dt / 0.05), 0.005);
}

TEST(Noise, AScaleMultipliesEveryStandardDeviationNotTheMeansNorTheDraws) {
  NoiseParams p;
  p.type = NoiseParams::Type::kGaussian;
  p.mean = 0.3;
  p.stddev = 0.5;
  p.bias_mean = 1.0;  // |random part| < 1: the sign of bias() is the sign of ±bias_mean
  p.bias_stddev = 0.2;
  p.dynamic_bias_stddev = 0.4;
  p.dynamic_bias_correlation_time = 0.02;
  Noise plain(p, 11), same(p, 11), scaled(p, 11);
  const double x = 7.0, signed_mean = std::copysign(p.bias_mean, plain.bias());
  for (int i = 0; i < 1000; ++i) {
    const double y = plain.apply(x, 0.001);
    EXPECT_EQ(same.apply(x, NoiseStep{0.001, 1.0}), y);  // scale 1 is the configured noise
    const double s = i < 500 ? 3.0 : 0.0;
    const double ys = scaled.apply(x, NoiseStep{0.001, s});
    // Everything random scales; the truth, the mean and the bias's mean do not.
    EXPECT_NEAR(ys - (x + p.mean + signed_mean), s * (y - (x + p.mean + signed_mean)), 1e-12);
  }
  // The same numbers were drawn: back at scale 1 the streams agree bit for bit.
  EXPECT_EQ(scaled.apply(x, 0.001), plain.apply(x, 0.001));
  EXPECT_EQ(scaled.dynamic_bias(), plain.dynamic_bias());
}

TEST(Noise, QuantizedOutputIsAMultipleOfThePrecision) {
  NoiseParams p;
  p.type = NoiseParams::Type::kGaussianQuantized;
  p.stddev = 0.3;
  p.precision = 0.25;
  Noise n(p, 3);
  for (int i = 0; i < 1000; ++i) {
    const double y = n.apply(1.0, 0.01);
    EXPECT_DOUBLE_EQ(y / 0.25, std::round(y / 0.25));
  }
}

TEST(Noise, SameSeedIdenticalDifferentSeedsDiffer) {
  NoiseParams p;
  p.type = NoiseParams::Type::kGaussian;
  p.stddev = 1;
  p.bias_stddev = 1;
  Noise a(p, derive_seed(1, "w::m::l::imu", "x")), b(p, derive_seed(1, "w::m::l::imu", "x"));
  Noise c(p, derive_seed(2, "w::m::l::imu", "x")), d(p, derive_seed(1, "w::m::l::imu2", "x"));
  Noise e(p, derive_seed(1, "w::m::l::imu", "y"));
  int same_c = 0, same_d = 0, same_e = 0;
  for (int i = 0; i < 100; ++i) {
    const double va = a.apply(0, 0.01);
    EXPECT_EQ(va, b.apply(0, 0.01));
    same_c += va == c.apply(0, 0.01);
    same_d += va == d.apply(0, 0.01);
    same_e += va == e.apply(0, 0.01);
  }
  EXPECT_EQ(same_c, 0);
  EXPECT_EQ(same_d, 0);
  EXPECT_EQ(same_e, 0);
  // A copy taken after construction restarts the stream exactly (how reset works).
  Noise f(p, 11);
  const Noise saved = f;
  const double first = f.apply(0, 0.01);
  f = saved;
  EXPECT_EQ(f.apply(0, 0.01), first);
}

}  // namespace
}  // namespace kestrel::sensors
