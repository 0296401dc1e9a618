// Sensor faults seen where users see them: on the sensors' topics. One world (every published
// sensor type, the systems declared in the file, FaultInjection with a schedule) runs three
// times through the whole pipeline — world file → FaultInjection → sensor systems → transport —
// and every message is recorded by its stamp: A with the faults, B without them, C without
// them and without noise. Runs inside scripts/netns (ctest), each run on its own IGN_PARTITION.
#include <ignition/msgs/altimeter.pb.h>
#include <ignition/msgs/contacts.pb.h>
#include <ignition/msgs/fluid_pressure.pb.h>
#include <ignition/msgs/image.pb.h>
#include <ignition/msgs/imu.pb.h>
#include <ignition/msgs/laserscan.pb.h>
#include <ignition/msgs/logical_camera_image.pb.h>
#include <ignition/msgs/magnetometer.pb.h>
#include <ignition/msgs/navsat.pb.h>
#include <ignition/msgs/wrench.pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include "sensors/common/test_sdf.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: aliases

using Values = std::vector<double>;
using Series = std::map<std::int64_t, Values>;  // stamp [ns] → the message's numbers

using sensors::testing::kH0;
using sensors::testing::kLat0;
using sensors::testing::kLon0;
constexpr double kDeg = M_PI / 180.0;

std::string noise(double sd, const std::string& type) {
  return sensors::testing::noise_xml(sd, type);
}
std::string xyz(double sd, const std::string& type) {
  return sensors::testing::xyz_noise_xml(sd, type);
}

// A crate dropped on the ground carrying the issue's IMU (crate::body::imu_a) and the other
// link sensors, a pendulum with a force-torque sensor; every sensor at 100 Hz on its own topic.
// Noise of `type` ("gaussian", or "none" for the noise-free run); `faults`: <fault> elements.
std::string world(const std::string& type, const std::string& faults) {
  auto sensor = [](const std::string& name, const std::string& kind, const std::string& body) {
    return sensors::testing::sensor_xml(name, kind, 100, body, "/t/" + name);
  };
  std::string w = R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 -9.81</gravity>
    <spherical_coordinates><surface_model>EARTH_WGS84</surface_model>
      <world_frame_orientation>ENU</world_frame_orientation><latitude_deg>47.397742</latitude_deg>
      <longitude_deg>8.545594</longitude_deg><elevation>488</elevation></spherical_coordinates>)";
  for (const char* s :
       {"Imu", "Magnetometer", "AirPressure", "Altimeter", "NavSat", "ForceTorque", "Contact"}) {
    w += std::string("<plugin filename=\"gz-sim-system\" name=\"gz::sim::systems::") + s + "\"/>";
  }
  w +=
      R"(<plugin filename="kestrel-fault-injection-system" name="kestrel::systems::FaultInjection">)" +
      faults + R"(</plugin>
    <model name="ground"><static>true</static><link name="l">
      <collision name="plane"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
    </link></model>
    <model name="crate"><pose>0 0 0.3 0 0 0.4</pose><link name="body">
      <inertial><mass>1.5</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
      </inertial>
      <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>)";
  w += sensor("imu_a", "imu",
              "<imu><angular_velocity>" + xyz(0.01, type) +
                  "</angular_velocity><linear_acceleration>" + xyz(0.05, type) +
                  "</linear_acceleration></imu>");
  w += sensor("mag", "magnetometer", "<magnetometer>" + xyz(1e-7, type) + "</magnetometer>");
  w += sensor("baro", "air_pressure",
              "<air_pressure><pressure>" + noise(2, type) + "</pressure></air_pressure>");
  w += sensor(
      "alt", "altimeter",
      "<altimeter><vertical_position>" + noise(0.1, type) + "</vertical_position></altimeter>");
  w +=
      sensor("gps", "navsat",
             "<navsat><position_sensing><horizontal>" + noise(1, type) + "</horizontal><vertical>" +
                 noise(2, type) + "</vertical></position_sensing></navsat>");
  w += sensor("touch", "contact", "<contact><collision>c</collision></contact>");
  w += R"(</link></model>
    <model name="pendulum"><pose>2 0 2 0 0 0</pose><link name="bob">
      <pose>0 0.3 -0.4 0 0 0</pose>
      <inertial><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
      </inertial></link>
      <joint name="hinge" type="revolute"><parent>world</parent><child>bob</child>
        <axis><xyz>1 0 0</xyz></axis>)";
  w += sensor("ft", "force_torque",
              "<force_torque><force>" + xyz(0.5, type) + "</force></force_torque>");
  w += "</joint></model></world></sdf>";
  return w;
}

// Meridional and prime-vertical radii of WGS84 at the origin, for metres from degrees.
void radii(double& m, double& n) {
  const double a = 6378137.0, e2 = 6.69437999014e-3, s = std::sin(kLat0 * kDeg);
  const double w = std::sqrt(1 - e2 * s * s);
  n = a / w;
  m = a * (1 - e2) / (w * w * w);
}

void add(Values& v, const msgs::Vector3d& m) { v.insert(v.end(), {m.x(), m.y(), m.z()}); }

// Every message of the run, by topic and stamp.
class Recorder {
 public:
  explicit Recorder(Node& node) : node_(&node) {}
  ~Recorder() {
    for (const auto& t : topics_) node_->Unsubscribe(t);
  }
  // Records `topic`'s messages as to_values(message, values) gives them.
  template <class M, class F>
  void listen(const std::string& topic, F to_values) {
    topics_.push_back(topic);
    std::function<void(const M&)> cb = [this, topic, to_values](const M& m) {
      Values v;
      to_values(m, v);
      std::lock_guard lock(m_);
      series_[topic][detail::from_msg(m.header().stamp()).count()] = std::move(v);
    };
    EXPECT_TRUE(node_->Subscribe(topic, cb)) << topic;
  }
  // Every topic has a message stamped at or after `t`.
  bool all_reached(Duration t) {
    std::lock_guard lock(m_);
    for (const auto& topic : topics_) {
      const auto it = series_.find(topic);
      if (it == series_.end() || it->second.empty() || it->second.rbegin()->first < t.count()) {
        return false;
      }
    }
    return true;
  }
  // Every topic has delivered something.
  bool all_connected() {
    std::lock_guard lock(m_);
    for (const auto& topic : topics_) {
      if (series_[topic].empty()) return false;
    }
    return true;
  }
  std::map<std::string, Series> take() {
    std::lock_guard lock(m_);
    return series_;
  }

 private:
  Node* node_ = nullptr;
  std::vector<std::string> topics_;
  std::mutex m_;
  std::map<std::string, Series> series_;
};

// The link sensors' topics of world().
void listen_link_sensors(Recorder& rec) {
  rec.listen<msgs::IMU>("/t/imu_a", [](const msgs::IMU& m, Values& v) {
    add(v, m.linear_acceleration());
    add(v, m.angular_velocity());
    v.insert(v.end(),
             {m.orientation().w(), m.orientation().x(), m.orientation().y(), m.orientation().z()});
  });
  rec.listen<msgs::Magnetometer>(
      "/t/mag", [](const msgs::Magnetometer& m, Values& v) { add(v, m.field_tesla()); });
  rec.listen<msgs::FluidPressure>(
      "/t/baro", [](const msgs::FluidPressure& m, Values& v) { v.push_back(m.pressure()); });
  rec.listen<msgs::Altimeter>("/t/alt", [](const msgs::Altimeter& m, Values& v) {
    v.insert(v.end(), {m.vertical_position(), m.vertical_velocity()});
  });
  // East, north, up from the origin [m] (first order in the offset: exact enough to compare
  // two readings a few metres apart).
  rec.listen<msgs::NavSat>("/t/gps", [](const msgs::NavSat& m, Values& v) {
    double rm, rn;
    radii(rm, rn);
    v.insert(v.end(), {(m.longitude_deg() - kLon0) * kDeg * (rn + kH0) * std::cos(kLat0 * kDeg),
                       (m.latitude_deg() - kLat0) * kDeg * (rm + kH0), m.altitude() - kH0});
  });
  rec.listen<msgs::Wrench>("/t/ft", [](const msgs::Wrench& m, Values& v) {
    add(v, m.force());
    add(v, m.torque());
  });
  rec.listen<msgs::Contacts>("/t/touch", [](const msgs::Contacts& m, Values& v) {
    v.push_back(m.contact_size());
    for (const auto& k : m.contact()) {
      for (const auto& p : k.position()) add(v, p);
      for (const auto& w : k.wrench()) add(v, w.body_1_wrench().force());
    }
  });
}

constexpr Duration kFirstFault = std::chrono::milliseconds(1000);
constexpr Duration kEnd = std::chrono::milliseconds(2600);

// Runs `sdf` to kEnd with the transport systems, on partition `partition`, stepping on this
// thread; returns every message from 0.9 s on. The subscriptions connect while the world steps
// slowly (they must before kFirstFault); then it runs as fast as it can.
std::map<std::string, Series> record(const std::string& sdf, const std::string& partition,
                                     const std::function<void(Recorder&)>& listen) {
  setenv("IGN_PARTITION", partition.c_str(), 1);
  configure_network(std::nullopt);
  const fs::path file =
      fs::temp_directory_path() / ("kestrel_fault_topics_" + std::to_string(getpid()) + ".sdf");
  std::ofstream(file) << sdf;
  sim::Runner::Options o;
  o.real_time_factor = 0;
  sim::Runner runner(o);
  world::load_world_into_runner(file, runner);
  fs::remove(file);
  runner.add_system(make_world_transport_system(runner), runner.world(), nullptr, "WorldTransport",
                    "test");
  runner.configure();
  Node node;
  Recorder rec(node);
  listen(rec);
  while (!rec.all_connected()) {
    runner.step_once();
    if (runner.info().sim_time >= kFirstFault - std::chrono::milliseconds(100)) {
      ADD_FAILURE() << "the sensor topics did not all connect before the first fault";
      return {};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  while (runner.info().sim_time < kEnd) runner.step_once();
  for (int i = 0; i < 3000 && !rec.all_reached(kEnd); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(rec.all_reached(kEnd)) << "messages up to the end did not all arrive";
  auto all = rec.take();
  for (auto& [topic, series] : all) {
    series.erase(series.begin(), series.lower_bound(900'000'000));
  }
  return all;
}

// The faults of run A, per topic: (from, to] [ms] of each window.
struct Window {
  std::int64_t from_ms, to_ms;
  bool contains(std::int64_t stamp_ns) const {
    return stamp_ns > from_ms * 1'000'000 && stamp_ns <= to_ms * 1'000'000;
  }
};
const Window kStopped{1000, 1200}, kBiased{1400, 1600}, kScaled{1800, 2000}, kNoFix{2200, 2400};
struct Plan {
  std::vector<int> bias_at;  // value index of each bias component (empty: no bias fault)
  Values bias;
  std::vector<int> noisy;  // values the noise fault scales (empty: no noise fault)
  double tolerance = 0;    // on comparisons that pass through degrees (navsat)
};

TEST(SensorFaultTopics, EveryFaultChangesWhatTheTopicCarriesAndRevertsExactly) {
  const std::string faults = R"(
      <fault time="1" duration="0.2" type="sensor_stop" sensor="crate::body::imu_a"/>
      <fault time="1.4" duration="0.2" type="sensor_bias" sensor="crate::body::imu_a" bias="0 0 5"/>
      <fault time="1.8" duration="0.2" type="sensor_noise" sensor="crate::body::imu_a" scale="4"/>
      <fault time="1" duration="0.2" type="sensor_stop" sensor="crate::body::mag"/>
      <fault time="1.4" duration="0.2" type="sensor_bias" sensor="crate::body::mag" bias="1e-6 -2e-6 3e-6"/>
      <fault time="1.8" duration="0.2" type="sensor_noise" sensor="crate::body::mag" scale="4"/>
      <fault time="1" duration="0.2" type="sensor_stop" sensor="crate::body::baro"/>
      <fault time="1.4" duration="0.2" type="sensor_bias" sensor="crate::body::baro" bias="120"/>
      <fault time="1.8" duration="0.2" type="sensor_noise" sensor="crate::body::baro" scale="4"/>
      <fault time="1" duration="0.2" type="sensor_stop" sensor="crate::body::alt"/>
      <fault time="1.4" duration="0.2" type="sensor_bias" sensor="crate::body::alt" bias="-1.5"/>
      <fault time="1.8" duration="0.2" type="sensor_noise" sensor="crate::body::alt" scale="4"/>
      <fault time="1" duration="0.2" type="sensor_stop" sensor="crate::body::gps"/>
      <fault time="1.4" duration="0.2" type="sensor_bias" sensor="crate::body::gps" bias="3 -4 5"/>
      <fault time="1.8" duration="0.2" type="sensor_noise" sensor="crate::body::gps" scale="4"/>
      <fault time="2.2" duration="0.2" type="gnss_loss" model="crate"/>
      <fault time="1" duration="0.2" type="sensor_stop" sensor="crate::body::touch"/>
      <fault time="1" duration="0.2" type="sensor_stop" sensor="pendulum::hinge::ft"/>
      <fault time="1.4" duration="0.2" type="sensor_bias" sensor="pendulum::hinge::ft" bias="1 2 -3"/>
      <fault time="1.8" duration="0.2" type="sensor_noise" sensor="pendulum::hinge::ft" scale="4"/>)";
  const int pid = getpid();
  auto a = record(world("gaussian", faults), "kestrel_faults_a_" + std::to_string(pid),
                  listen_link_sensors);
  auto b =
      record(world("gaussian", ""), "kestrel_faults_b_" + std::to_string(pid), listen_link_sensors);
  auto c =
      record(world("none", ""), "kestrel_faults_c_" + std::to_string(pid), listen_link_sensors);
  ASSERT_FALSE(a.empty() || b.empty() || c.empty());

  std::map<std::string, Plan> plans;
  plans["/t/imu_a"] = {{0, 1, 2}, {0, 0, 5}, {0, 1, 2, 3, 4, 5}};
  plans["/t/mag"] = {{0, 1, 2}, {1e-6, -2e-6, 3e-6}, {0, 1, 2}};
  plans["/t/baro"] = {{0}, {120}, {0}};
  plans["/t/alt"] = {{0}, {-1.5}, {0}};
  plans["/t/gps"] = {{0, 1, 2}, {3, -4, 5}, {0, 1, 2}, 1e-4};
  plans["/t/touch"] = {};
  plans["/t/ft"] = {{0, 1, 2}, {1, 2, -3}, {0, 1, 2}};

  for (const auto& [topic, plan] : plans) {
    SCOPED_TRACE(topic);
    const Series &sa = a[topic], &sb = b[topic], &sc = c[topic];
    ASSERT_EQ(sb.size(), 171u);  // 0.9 .. 2.6 s at 100 Hz
    ASSERT_EQ(sc.size(), sb.size());
    int stopped = 0, biased = 0, scaled = 0, lost = 0, same = 0;
    for (const auto& [stamp, vb] : sb) {
      SCOPED_TRACE("stamp " + std::to_string(stamp) + " ns");
      const auto found = sa.find(stamp);
      if (kStopped.contains(stamp) || (topic == "/t/gps" && kNoFix.contains(stamp))) {
        EXPECT_EQ(found, sa.end()) << "published while stopped or without a fix";
        (kStopped.contains(stamp) ? stopped : lost) += found == sa.end();
        continue;
      }
      ASSERT_NE(found, sa.end()) << "missing after the fault ended";
      const Values& va = found->second;
      const Values& vc = sc.at(stamp);
      ASSERT_EQ(va.size(), vb.size());
      const bool in_bias = !plan.bias_at.empty() && kBiased.contains(stamp);
      const bool in_noise = !plan.noisy.empty() && kScaled.contains(stamp);
      for (std::size_t j = 0; j < va.size(); ++j) {
        double expected = vb[j];
        if (in_bias) {
          for (std::size_t m = 0; m < plan.bias_at.size(); ++m) {
            if (plan.bias_at[m] == static_cast<int>(j)) expected += plan.bias[m];
          }
        }
        const bool noisy = in_noise && std::find(plan.noisy.begin(), plan.noisy.end(),
                                                 static_cast<int>(j)) != plan.noisy.end();
        if (noisy) {
          EXPECT_NE(vb[j], vc[j]) << "value " << j << " has no noise to scale";
          EXPECT_NEAR(va[j] - vc[j], 4 * (vb[j] - vc[j]),
                      1e-9 * (1 + std::abs(vc[j])) + plan.tolerance)
              << "value " << j;
        } else if (plan.tolerance > 0) {
          EXPECT_NEAR(va[j], expected, plan.tolerance) << "value " << j;
        } else {
          EXPECT_EQ(va[j], expected) << "value " << j;
        }
      }
      in_bias ? ++biased : in_noise ? ++scaled : ++same;
    }
    EXPECT_EQ(stopped, 20);  // (1.0, 1.2] s at 100 Hz
    EXPECT_EQ(biased, plan.bias_at.empty() ? 0 : 20);
    EXPECT_EQ(scaled, plan.noisy.empty() ? 0 : 20);
    EXPECT_EQ(lost, topic == "/t/gps" ? 20 : 0);
    EXPECT_GT(same, 80);  // before, between and after the faults: bit for bit
  }
  // The issue's example in absolute terms: the crate rests on the ground, its IMU reads about
  // +9.81 m/s² up (noise 0.05) and the bias takes z to about 14.81.
  const auto& imu = a["/t/imu_a"];
  EXPECT_NEAR(imu.at(1'390'000'000)[2], 9.81, 0.3);
  EXPECT_NEAR(imu.at(1'500'000'000)[2], 14.81, 0.3);
  EXPECT_NEAR(imu.at(1'700'000'000)[2], 9.81, 0.3);
}

// The rendering sensors on their topics: a camera, a depth camera, a segmentation camera, a
// gpu_lidar, a lidar and a logical camera on a rig in a closed room, the Sensors, CpuLidar and
// LogicalCamera systems declared as a Gazebo world declares them. Noise of `type` ("gaussian"
// or "none").
std::string rendering_world(const std::string& type, const std::string& faults) {
  auto sensor = [](const std::string& name, const std::string& kind, const std::string& body) {
    return sensors::testing::sensor_xml(name, kind, 100, body, "/t/" + name);
  };
  auto camera = [&](double sd) {
    std::string b =
        "<camera><horizontal_fov>1.2</horizontal_fov><image><width>32</width><height>24</height>"
        "</image><clip><near>0.1</near><far>20</far></clip>";
    if (type != "none" && sd > 0) {
      b += "<noise><type>" + type + "</type><stddev>" + std::to_string(sd) + "</stddev></noise>";
    }
    return b + "</camera>";
  };
  std::string lidar =
      "<lidar><scan><horizontal><samples>60</samples><min_angle>-3</min_angle><max_angle>3"
      "</max_angle></horizontal></scan><range><min>0.1</min><max>30</max></range>";
  if (type != "none") lidar += "<noise><type>" + type + "</type><stddev>0.02</stddev></noise>";
  lidar += "</lidar>";
  std::string w = R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <scene><ambient>1 1 1 1</ambient><background>0 0 0 1</background></scene>
    <plugin filename="gz-sim-sensors-system" name="gz::sim::systems::Sensors">
      <render_engine>ogre2</render_engine></plugin>
    <plugin filename="gz-sim-cpu-lidar-system" name="gz::sim::systems::CpuLidar"/>
    <plugin filename="gz-sim-logical-camera-system" name="gz::sim::systems::LogicalCamera"/>
    <plugin filename="kestrel-fault-injection-system" name="kestrel::systems::FaultInjection">)" +
                  faults + "</plugin>";
  const char* walls[][3] = {{"px", "3.5 0 2", "1 8 6"},     {"nx", "-3.5 0 2", "1 8 6"},
                            {"py", "0 3.5 2", "8 1 6"},     {"ny", "0 -3.5 2", "8 1 6"},
                            {"floor", "0 0 -0.5", "8 8 1"}, {"roof", "0 0 4.5", "8 8 1"}};
  for (const auto& [name, pos, size] : walls) {
    const std::string g = std::string("<geometry><box><size>") + size + "</size></box></geometry>";
    w += std::string("<model name='") + name + "'><static>true</static><pose>" + pos +
         " 0 0 0</pose><link name='l'><collision name='c'>" + g + "</collision><visual name='v'>" +
         g + "<material><ambient>0.5 0.45 0.4 1</ambient></material></visual></link></model>";
  }
  w += "<model name='rig'><static>true</static><pose>0 0 1 0 0 0.3</pose><link name='l'>";
  w += sensor("cam", "camera", camera(0.02));
  w += sensor("depth", "depth_camera", camera(0.01));
  w += sensor("seg", "segmentation", camera(0));
  w += sensor("gpu", "gpu_lidar", lidar);
  w += sensor("cpu", "lidar", lidar);
  w += sensor("logical", "logical_camera",
              "<logical_camera><near>0.1</near><far>5</far><horizontal_fov>1.2</horizontal_fov>"
              "<aspect_ratio>1.33</aspect_ratio></logical_camera>");
  return w + "</link></model></world></sdf>";
}

void listen_rendering_sensors(Recorder& rec) {
  auto bytes = [](const msgs::Image& m, Values& v) {
    for (const unsigned char b : m.data()) v.push_back(b);
  };
  rec.listen<msgs::Image>("/t/cam", bytes);
  rec.listen<msgs::Image>("/t/depth", [](const msgs::Image& m, Values& v) {
    v.resize(m.data().size() / 4);
    for (std::size_t i = 0; i < v.size(); ++i) {
      float f;
      std::memcpy(&f, m.data().data() + 4 * i, 4);
      v[i] = f;
    }
  });
  rec.listen<msgs::Image>("/t/seg/labels_map", bytes);
  auto ranges = [](const msgs::LaserScan& m, Values& v) {
    v.assign(m.ranges().begin(), m.ranges().end());
  };
  rec.listen<msgs::LaserScan>("/t/gpu", ranges);
  rec.listen<msgs::LaserScan>("/t/cpu", ranges);
  rec.listen<msgs::LogicalCameraImage>(
      "/t/logical", [](const msgs::LogicalCameraImage& m, Values& v) {
        v.push_back(m.model_size());
        for (const auto& k : m.model()) {
          v.insert(v.end(), {k.pose().position().x(), k.pose().position().y()});
        }
      });
}

TEST(SensorFaultTopics, RenderingSensorsStopAndScaleTheirNoiseOnTheirTopics) {
  std::string faults;
  for (const char* s : {"cam", "depth", "seg", "gpu", "cpu", "logical"}) {
    faults += std::string(R"(<fault time="1" duration="0.2" type="sensor_stop" sensor="rig::l::)") +
              s + "\"/>";
  }
  for (const char* s : {"cam", "depth", "gpu", "cpu"}) {
    faults += std::string(R"(<fault time="1.8" duration="0.2" type="sensor_noise" )") +
              R"(scale="4" sensor="rig::l::)" + s + "\"/>";
  }
  const int pid = getpid();
  auto a = record(rendering_world("gaussian", faults), "kestrel_rfaults_a_" + std::to_string(pid),
                  listen_rendering_sensors);
  auto b = record(rendering_world("gaussian", ""), "kestrel_rfaults_b_" + std::to_string(pid),
                  listen_rendering_sensors);
  auto c = record(rendering_world("none", ""), "kestrel_rfaults_c_" + std::to_string(pid),
                  listen_rendering_sensors);
  ASSERT_FALSE(a.empty() || b.empty() || c.empty());
  // |(a − c) − 4 (b − c)| per value: 8-bit colours round each of a, b, c by half a level.
  const std::map<std::string, double> noisy = {
      {"/t/cam", 4.0}, {"/t/depth", 2e-5}, {"/t/gpu", 1e-9}, {"/t/cpu", 1e-9}};
  for (const char* topic :
       {"/t/cam", "/t/depth", "/t/seg/labels_map", "/t/gpu", "/t/cpu", "/t/logical"}) {
    SCOPED_TRACE(topic);
    const Series &sa = a[topic], &sb = b[topic], &sc = c[topic];
    ASSERT_EQ(sb.size(), 171u);  // 0.9 .. 2.6 s at 100 Hz
    ASSERT_EQ(sc.size(), sb.size());
    const auto tol = noisy.find(topic);
    int stopped = 0, scaled = 0, same = 0;
    for (const auto& [stamp, vb] : sb) {
      SCOPED_TRACE("stamp " + std::to_string(stamp) + " ns");
      const auto found = sa.find(stamp);
      if (kStopped.contains(stamp)) {
        EXPECT_EQ(found, sa.end()) << "published while stopped";
        stopped += found == sa.end();
        continue;
      }
      ASSERT_NE(found, sa.end()) << "missing after the fault ended";
      const Values& va = found->second;
      const Values& vc = sc.at(stamp);
      ASSERT_EQ(va.size(), vb.size());
      if (tol == noisy.end() || !kScaled.contains(stamp)) {
        ASSERT_EQ(va, vb);  // bit for bit, after the stop too (the noise did not shift)
        ++same;
        continue;
      }
      ASSERT_NE(vb, vc) << "no noise to scale";
      for (std::size_t j = 0; j < va.size(); ++j) {
        ASSERT_NEAR(va[j] - vc[j], 4 * (vb[j] - vc[j]), tol->second) << "value " << j;
      }
      ++scaled;
    }
    EXPECT_EQ(stopped, 20);  // (1.0, 1.2] s at 100 Hz
    EXPECT_EQ(scaled, tol == noisy.end() ? 0 : 20);
    EXPECT_GT(same, 120);
  }
  // The logical camera saw the wall ahead of it.
  EXPECT_GE(b["/t/logical"].begin()->second.at(0), 1);
}

}  // namespace
}  // namespace kestrel::transport
