// kestrel topic / service / model (include/kestrel/transport/cli.h). Output follows Gazebo's
// `gz topic`, `gz service` and `gz model`.
#include <fmt/format.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <ignition/msgs/empty.pb.h>
#include <ignition/msgs/scene.pb.h>
#include <ignition/msgs/stringmsg_v.pb.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <ignition/msgs/Factory.hh>
#include <iostream>
#include <mutex>
#include <thread>

#include "kestrel/transport/cli.h"
#include "kestrel/transport/transport.h"
#include "transport/common.h"

namespace kestrel::transport {
namespace {

namespace msgs = ignition::msgs;
using ProtoMsg = google::protobuf::Message;

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }

// Gazebo Garden spells types gz.msgs.X; ignition-msgs 8 knows them as ignition.msgs.X.
std::string canonical_type(const std::string& t) {
  if (t.rfind("gz.msgs.", 0) == 0) return "ignition.msgs." + t.substr(8);
  return t;
}

std::unique_ptr<ProtoMsg> make_msg(const std::string& type, const std::string& text,
                                   std::ostream& err) {
  auto m = msgs::Factory::New(canonical_type(type));
  if (!m) {
    err << "error: unknown message type '" << type
        << "' (expected e.g. ignition.msgs.StringMsg; see `kestrel topic -i -t TOPIC`)\n";
    return nullptr;
  }
  if (!text.empty() && !google::protobuf::TextFormat::ParseFromString(text, m.get())) {
    err << "error: cannot read '" << text << "' as " << m->GetTypeName()
        << " in protobuf text format (example: 'data: \"hello\"' for StringMsg)\n";
    return nullptr;
  }
  return m;
}

std::string to_json(const ProtoMsg& m) {
  std::string s;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &s, o);
  return s;
}

int topic_list(ignition::transport::Node& node, std::ostream& out) {
  std::vector<std::string> topics;
  node.TopicList(topics);
  std::sort(topics.begin(), topics.end());
  for (const auto& t : topics) out << t << "\n";
  return 0;
}

int topic_info(ignition::transport::Node& node, const TopicOptions& o, std::ostream& out,
               std::ostream& err) {
  std::vector<ignition::transport::MessagePublisher> pubs;
  std::vector<std::string> topics;
  node.TopicList(topics);                          // waits for discovery to start
  for (int i = 0; i < 100 && pubs.empty(); ++i) {  // then up to 1 s for the publisher's answer
    node.TopicInfo(o.topic, pubs);
    if (pubs.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (pubs.empty()) {
    err << "error: no publishers on topic [" << o.topic << "]\n";
    return 1;
  }
  out << "Publishers [Address, Message Type]:\n";
  for (const auto& p : pubs) out << "  " << p.Addr() << ", " << p.MsgTypeName() << "\n";
  return 0;
}

int topic_echo(ignition::transport::Node& node, const TopicOptions& o, std::ostream& out) {
  std::mutex m;
  std::condition_variable cv;
  int received = 0;
  std::function<void(const ProtoMsg&)> cb = [&](const ProtoMsg& msg) {
    std::lock_guard lock(m);
    if (o.count > 0 && received >= o.count) return;
    if (o.json) {
      out << to_json(msg) << "\n";
    } else {
      out << msg.DebugString() << "\n";
    }
    out.flush();
    ++received;
    cv.notify_all();
  };
  if (!node.Subscribe(o.topic, cb)) return 2;
  auto prev = std::signal(SIGINT, on_sigint);
  const auto deadline = o.duration
                            ? std::chrono::steady_clock::now() +
                                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(*o.duration))
                            : std::chrono::steady_clock::time_point::max();
  {
    std::unique_lock lock(m);
    while (!g_interrupted && std::chrono::steady_clock::now() < deadline &&
           !(o.count > 0 && received >= o.count)) {
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
  }
  node.Unsubscribe(o.topic);
  std::signal(SIGINT, prev);
  return 0;
}

int topic_publish(ignition::transport::Node& node, const TopicOptions& o, std::ostream& err) {
  auto msg = make_msg(o.msgtype, o.payload, err);
  if (!msg) return 2;
  auto pub = node.Advertise(o.topic, std::string(msg->GetTypeName()));
  if (!pub) {
    err << "error: cannot advertise [" << o.topic << "] as " << msg->GetTypeName() << "\n";
    return 1;
  }
  // Give remote subscribers time to discover the publisher and connect. HasConnections turns
  // true on the subscriber's discovery message, which can come before its socket has joined:
  // a message published at once is then lost (seen with a second `topic -p` on a topic whose
  // previous publisher had gone), so the socket gets a moment more.
  for (int i = 0; i < 150 && !pub.HasConnections(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (pub.HasConnections()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (!pub.Publish(*msg)) {
    err << "error: publishing on [" << o.topic << "] failed\n";
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the message leave
  return 0;
}

// A request to a Kestrel/Gazebo service; nullopt (and a message on err) if it failed.
template <class Rep, class Req>
std::optional<Rep> call(ignition::transport::Node& node, const std::string& service, const Req& req,
                        std::chrono::milliseconds timeout, std::ostream& err) {
  Rep rep;
  bool result = false;
  if (!node.Request(service, req, static_cast<unsigned>(timeout.count()), rep, result)) {
    err << "error: service " << service << " did not answer within " << timeout.count()
        << " ms (is `kestrel run` running, with transport, on the same IGN_PARTITION?)\n";
    return std::nullopt;
  }
  if (!result) {
    err << "error: service " << service << " answered false\n";
    return std::nullopt;
  }
  return rep;
}

// ---- model -------------------------------------------------------------------------------------

std::string pose_lines(const msgs::Pose& p, const std::string& indent) {
  const auto X = detail::from_msg(p);
  const auto rpy = X.Rot().Euler();
  return fmt::format(
      "{0}- Pose [ XYZ (m) ] [ RPY (rad) ]:\n{0}  [{1:.6f} {2:.6f} {3:.6f}]\n"
      "{0}  [{4:.6f} {5:.6f} {6:.6f}]\n",
      indent, X.Pos().X(), X.Pos().Y(), X.Pos().Z(), rpy.X(), rpy.Y(), rpy.Z());
}

const msgs::Model* find_model(const google::protobuf::RepeatedPtrField<msgs::Model>& models,
                              const std::string& name) {
  for (const auto& m : models) {
    if (m.name() == name) return &m;
  }
  for (const auto& m : models) {
    if (const auto* n = find_model(m.model(), name)) return n;
  }
  return nullptr;
}

std::string joint_type_name(msgs::Joint::Type t) {
  std::string s = msgs::Joint::Type_Name(t);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

}  // namespace

int run_topic_command(const TopicOptions& o, std::ostream& out, std::ostream& err) {
  configure_network(std::nullopt);
  ignition::transport::Node node;
  switch (o.action) {
    case TopicOptions::Action::kList:
      return topic_list(node, out);
    case TopicOptions::Action::kInfo:
      return topic_info(node, o, out, err);
    case TopicOptions::Action::kEcho:
      return topic_echo(node, o, out);
    case TopicOptions::Action::kPublish:
      return topic_publish(node, o, err);
  }
  return 2;
}

int run_service_command(const ServiceOptions& o, std::ostream& out, std::ostream& err) {
  configure_network(std::nullopt);
  ignition::transport::Node node;
  if (o.action == ServiceOptions::Action::kList) {
    std::vector<std::string> services;
    node.ServiceList(services);
    std::sort(services.begin(), services.end());
    for (const auto& s : services) out << s << "\n";
    return 0;
  }
  if (o.action == ServiceOptions::Action::kInfo) {
    std::vector<std::string> services;
    node.ServiceList(services);
    std::vector<ignition::transport::ServicePublisher> pubs;
    for (int i = 0; i < 100 && pubs.empty(); ++i) {
      node.ServiceInfo(o.service, pubs);
      if (pubs.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pubs.empty()) {
      err << "error: no service [" << o.service << "]\n";
      return 1;
    }
    out << "Service providers [Address, Request Message Type, Response Message Type]:\n";
    for (const auto& p : pubs) {
      out << "  " << p.Addr() << ", " << p.ReqTypeName() << ", " << p.RepTypeName() << "\n";
    }
    return 0;
  }
  auto req = make_msg(o.reqtype, o.request, err);
  auto rep = make_msg(o.reptype, "", err);
  if (!req || !rep) return 2;
  bool result = false;
  std::vector<double> rtt_us;
  for (int i = 0; i < std::max(1, o.repeat); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!node.Request(o.service, *req, static_cast<unsigned>(o.timeout.count()), *rep, result)) {
      err << "error: service call to " << o.service << " timed out after " << o.timeout.count()
          << " ms\n";
      return 1;
    }
    rtt_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  if (o.repeat > 1) {
    const double first = rtt_us.front();
    rtt_us.erase(rtt_us.begin());  // the first call includes discovery
    std::sort(rtt_us.begin(), rtt_us.end());
    const auto at = [&](double q) {
      return rtt_us[static_cast<std::size_t>(q * (rtt_us.size() - 1))];
    };
    err << fmt::format(
        "round trip over {} calls [us]: min {:.0f} median {:.0f} p99 {:.0f} max "
        "{:.0f} (first call {:.0f})\n",
        rtt_us.size(), rtt_us.front(), at(0.5), at(0.99), rtt_us.back(), first);
  }
  if (o.json) {
    out << to_json(*rep) << "\n";
  } else {
    out << rep->DebugString() << "\n";
  }
  if (!result) {
    err << "error: service call to " << o.service << " failed\n";
    return 1;
  }
  return 0;
}

int run_model_command(const ModelOptions& o, std::ostream& out, std::ostream& err) {
  configure_network(std::nullopt);
  ignition::transport::Node node;
  std::string world = o.world;
  if (world.empty()) {
    auto worlds = call<msgs::StringMsg_V>(node, "/gazebo/worlds", msgs::Empty(), o.timeout, err);
    if (!worlds) return 1;
    if (worlds->data_size() == 0) {
      err << "error: /gazebo/worlds lists no world\n";
      return 1;
    }
    world = worlds->data(0);
  }
  auto scene =
      call<msgs::Scene>(node, "/world/" + world + "/scene/info", msgs::Empty(), o.timeout, err);
  if (!scene) return 1;
  if (o.list || o.model.empty()) {
    out << "Available models:\n";
    for (const auto& m : scene->model()) out << "    - " << m.name() << "\n";
    return 0;
  }
  const msgs::Model* m = find_model(scene->model(), o.model);
  if (!m) {
    err << "error: no model named <" << o.model << "> in world [" << world << "]\n";
    return 1;
  }
  const bool all = !o.pose && !o.links && !o.joints;
  if (all || o.pose) {
    out << "Model: [" << m->id() << "]\n  - Name: " << m->name() << "\n  - Parent: " << world
        << "\n";
    out << pose_lines(m->pose(), "  ");
  }
  if (all || o.links) {
    bool found = false;
    for (const auto& l : m->link()) {
      if (!o.link.empty() && l.name() != o.link) continue;
      found = true;
      out << "  - Link [" << l.id() << "]\n    - Name: " << l.name()
          << "\n    - Parent: " << m->name() << " [" << m->id() << "]\n";
      if (l.has_inertial()) out << fmt::format("    - Mass (kg): {:.6f}\n", l.inertial().mass());
      out << pose_lines(l.pose(), "    ");
    }
    if (!found && !o.link.empty()) {
      err << "error: model <" << m->name() << "> has no link <" << o.link << ">\n";
      return 1;
    }
  }
  if (all || o.joints) {
    bool found = false;
    for (const auto& j : m->joint()) {
      if (!o.joint.empty() && j.name() != o.joint) continue;
      found = true;
      out << "  - Joint [" << j.id() << "]\n    - Name: " << j.name()
          << "\n    - Parent: " << m->name() << " [" << m->id()
          << "]\n    - Type: " << joint_type_name(j.type()) << "\n    - Parent Link: ["
          << j.parent_id() << "] " << j.parent() << "\n    - Child Link: [" << j.child_id() << "] "
          << j.child() << "\n";
      out << pose_lines(j.pose(), "    ");
    }
    if (!found && !o.joint.empty()) {
      err << "error: model <" << m->name() << "> has no joint <" << o.joint << ">\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace kestrel::transport
